-- Monthly revenue per offer (perk), for brand and offer questions: revenue_monthly split by perk_id.
-- Join dim_offers on perk_id for brands and titles, dim_groups on organisation_group_id for group names;
-- sums per group, month, currency and status equal revenue_monthly's (sql/tests/revenue_offers_reconcile.sql).
-- month is the first day of the group's LOCAL month; currencies are never summed together.
-- grain: one row per organisation_group_id, month, order_currency, order_status, perk_id
-- key: organisation_group_id, month, order_currency, order_status, perk_id
-- columns:
--   organisation_group_id: the group (join dim_groups)
--   month: first day of the group's local month of the orders
--   order_currency: currency of the orders (never summed with another)
--   order_status: order status as the API reports it (e.g. Complete, Refunded)
--   perk_id: the perk ordered (join dim_offers); null for orders that name none
--   orders: number of orders
--   face_value: sum of the orders' face_value
--   order_total_paid: sum of what the users paid
--   order_credit: sum of platform credit spent on the orders
--   order_saving: sum of the users' savings
--   group_revenue: sum of the group's revenue from the orders
--   is_recognised: the status is recognised revenue, as in revenue_monthly (PERKS_REVENUE_STATUSES at the build;
--     a closed month: the rule it was closed under)
--   month_state: the group's month: partial (the extract starts after its first day), provisional (not yet past
--     the lookback), final (past the lookback: the extract will not change it) or signed_off (`perks close`); the
--     word the report and `perks status` use (src/closes/month-state.ts)
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   not_null: organisation_group_id, month, orders, is_recognised, month_state, is_test_group

with orders as (

    select *, cast(date_trunc('month', order_date) as date) as month from stg_orders

),

per_offer as (

    select
        organisation_group_id,
        month,
        order_currency,
        order_status,
        perk_id,
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
        per_offer.*,
        coalesce(
            list_contains(coalesce(closes.revenue_statuses, getvariable('revenue_statuses')), per_offer.order_status),
            false
        ) as is_recognised,
        coalesce(states.month_state, 'provisional'::month_state) as month_state,
        coalesce(groups.is_sandbox, false) as is_test_group
    from per_offer
    left join close_records as closes
        on per_offer.organisation_group_id = closes.organisation_group_id
        and per_offer.month = closes.month
    left join stg_month_states as states
        on per_offer.organisation_group_id = states.organisation_group_id
        and per_offer.month = states.month
    left join stg_groups as groups
        on per_offer.organisation_group_id = groups.organisation_group_id

)

select * from final
