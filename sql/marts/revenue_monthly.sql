-- Monthly revenue, for finance: orders and their money per group, local month, currency and status.
-- month is the first day of the group's LOCAL month (order_date is the group's local day).
-- Money is DECIMAL, summed exactly; currencies are never summed together (currency is in the grain).
-- Reconciled by sql/tests/revenue_reconciles_with_orders.sql against stg_orders.
-- As closed vs as now (issue 17): the measures are always AS NOW (every order as last extracted). For a month
-- signed off with `perks close`, is_closed is true and the *_as_closed columns hold the figures the close froze
-- (from the close record); a status with orders at the close and none now has a row with zero current
-- measures. as now − as closed = the month's rows in revenue_adjustments. Open months: *_as_closed null.
-- Recognised revenue (issue 25): is_recognised says whether the row's status counts as revenue under
-- PERKS_REVENUE_STATUSES (default Complete) as the build read it, or, for a closed month, under the rule the
-- close recorded. The finance report's headline is sum(group_revenue) where is_recognised (a closed month:
-- sum(group_revenue_as_closed) where is_recognised) and not is_test_group (test groups: is_sandbox on the
-- platform, left out of the report's totals unless it is asked to count them, as in every mart);
-- sql/tests/recognised_revenue_reconciles.sql holds it.
-- grain: one row per organisation_group_id, month, order_currency, order_status
-- key: organisation_group_id, month, order_currency, order_status
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   month: first day of the group's local month of the orders
--   order_currency: currency of the orders (never summed with another)
--   order_status: order status as the API reports it (e.g. Complete, Refunded)
--   orders: number of orders
--   face_value: sum of the orders' face_value (the perks' value at full price)
--   order_total_paid: sum of what the users paid (order_total_paid)
--   order_credit: sum of platform credit spent on the orders (order_credit)
--   order_saving: sum of the users' savings (order_saving)
--   group_revenue: sum of the group's revenue from the orders (group_revenue)
--   is_recognised: the status is recognised revenue (PERKS_REVENUE_STATUSES at the build, default Complete; a
--     closed month: the rule it was closed under); sum group_revenue where is_recognised for the report's headline
--   is_closed: the month is signed off for the group (`perks close`; a reopen makes it false again)
--   closed_at: when the close in force was made (UTC); null when not closed
--   orders_as_closed: orders as the close froze them; null when not closed
--   face_value_as_closed: face value as closed; null when not closed
--   order_total_paid_as_closed: paid as closed; null when not closed
--   order_credit_as_closed: credit as closed; null when not closed
--   order_saving_as_closed: savings as closed; null when not closed
--   group_revenue_as_closed: group revenue as closed; null when not closed
--   month_state: the group's month: partial (the extract starts after its first day), provisional (not yet past
--     the lookback), final (past the lookback: the extract will not change it) or signed_off (`perks close`); the
--     word the report and `perks status` use (src/closes/month-state.ts)
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its
--     totals, so its headline is sum(group_revenue) where is_recognised and not is_test_group
-- tests:
--   unique: organisation_group_id, month, order_currency, order_status
--   not_null: organisation_group_id, month, orders, is_recognised, month_state, is_test_group

with orders as (

    select *, cast(date_trunc('month', order_date) as date) as month from stg_orders

),

now as (

    select
        organisation_group_id,
        month,
        order_currency,
        order_status,
        count(*) as orders,
        coalesce(sum(face_value), 0) as face_value,
        coalesce(sum(order_total_paid), 0) as order_total_paid,
        coalesce(sum(order_credit), 0) as order_credit,
        coalesce(sum(order_saving), 0) as order_saving,
        coalesce(sum(group_revenue), 0) as group_revenue
    from orders
    group by all

),

final as (

    select
        coalesce(now.organisation_group_id, frozen.organisation_group_id) as organisation_group_id,
        coalesce(now.month, frozen.month) as month,
        coalesce(now.order_currency, frozen.order_currency) as order_currency,
        coalesce(now.order_status, frozen.order_status) as order_status,
        coalesce(now.orders, 0) as orders,
        coalesce(now.face_value, 0) as face_value,
        coalesce(now.order_total_paid, 0) as order_total_paid,
        coalesce(now.order_credit, 0) as order_credit,
        coalesce(now.order_saving, 0) as order_saving,
        coalesce(now.group_revenue, 0) as group_revenue,
        coalesce(list_contains(
            coalesce(closes.revenue_statuses, getvariable('revenue_statuses')),
            coalesce(now.order_status, frozen.order_status)
        ), false) as is_recognised,
        closes.closed_at is not null as is_closed,
        closes.closed_at,
        case when closes.closed_at is not null then coalesce(frozen.orders, 0) end as orders_as_closed,
        case when closes.closed_at is not null then coalesce(frozen.face_value, 0) end as face_value_as_closed,
        case
            when closes.closed_at is not null then coalesce(frozen.order_total_paid, 0)
        end as order_total_paid_as_closed,
        case when closes.closed_at is not null then coalesce(frozen.order_credit, 0) end as order_credit_as_closed,
        case when closes.closed_at is not null then coalesce(frozen.order_saving, 0) end as order_saving_as_closed,
        case when closes.closed_at is not null then coalesce(frozen.group_revenue, 0) end as group_revenue_as_closed,
        coalesce(states.month_state, 'provisional'::month_state) as month_state,
        coalesce(groups.is_sandbox, false) as is_test_group
    from now
    full outer join close_figures as frozen
        on now.organisation_group_id = frozen.organisation_group_id
        and now.month = frozen.month
        and now.order_currency is not distinct from frozen.order_currency
        and now.order_status is not distinct from frozen.order_status
    left join close_records as closes
        on coalesce(now.organisation_group_id, frozen.organisation_group_id) = closes.organisation_group_id
        and coalesce(now.month, frozen.month) = closes.month
    left join stg_month_states as states
        on coalesce(now.organisation_group_id, frozen.organisation_group_id) = states.organisation_group_id
        and coalesce(now.month, frozen.month) = states.month
    left join stg_groups as groups
        on coalesce(now.organisation_group_id, frozen.organisation_group_id) = groups.organisation_group_id

)

select * from final
