-- Savings per user and local month (order_date is the group's local day): the user's orders (order_saving, face value,
-- credit spent on orders)
-- and, from redemption statistics (window_start = month), egift savings and face value.
-- Orders of no current user (stg_orders.user_id null: anonymised, unknown or no email) form one
-- unattributed row per group, month and currency (user_id null), so group totals still add up to revenue_monthly.
-- Currencies stay apart: order_currency is in the grain. Money is DECIMAL(18,2): one user's month fits.
-- Redemption statistics carry no currency: their figures sit on the user's first currency row of the month (the
-- only row, in the usual single-currency group), or on a row with order_currency null when the user had no orders
-- that month.
-- What counts (issue 43): orders, order_saving, face_value and credit_spent hold every status, as before;
-- recognised_orders and recognised_order_saving beside them hold the orders whose status is recognised revenue
-- (two columns, not four: each column of this mart costs every build's export), the rule revenue_monthly
-- follows (is_recognised), so recognised savings reconcile with recognised revenue's orders
-- (sql/tests/savings_reconciles_with_revenue.sql). Redemption statistics carry no status: egift_* count them all.
-- Built by intervals (src/transform/incremental.ts): a group's month is rebuilt only when its orders or
-- redemption statistics changed, a user of its rows changed UID, its month_state changed (stg_month_states), or
-- its group's test flag did (stg_groups.is_sandbox).
-- grain: one row per organisation_group_id, month, user_id, order_currency
-- key: organisation_group_id, month, user_id, order_currency
-- incremental: month on organisation_group_id, month
-- lookup: stg_users(user_id) = user_id, reading user_uid
-- lookup: stg_groups(organisation_group_id) = organisation_group_id, reading is_sandbox
-- columns:
--   organisation_group_id: the group
--   month: first day of the group's local month
--   user_id: the Perks user id; null on the group's unattributed row (orders of no current user)
--   user_uid: the user's UID on the platform (null when unattributed)
--   is_unattributed: true on the row of orders whose email matches no current user
--   order_currency: currency of the orders; null on a row with only redemption statistics
--   orders: the user's orders in the month (every status; recognised_orders: those that count as revenue)
--   order_saving: sum of the orders' order_saving
--   face_value: sum of the orders' face_value
--   credit_spent: sum of the orders' order_credit (credit spent on orders)
--   redemptions: all_redemptions_count of the month's redemption statistics
--   egift_orders: egift_orders_count of the month's redemption statistics
--   egift_savings: egift_savings of the month's redemption statistics (no currency given by the API)
--   egift_face_value: egift_face_value of the month's redemption statistics
--   recognised_orders: of orders, those whose status is recognised revenue (revenue_monthly's is_recognised:
--     PERKS_REVENUE_STATUSES at the build, default Complete; a signed-off month: the rule it was closed under)
--   recognised_order_saving: order_saving of the recognised orders (what members saved on orders that count)
--   month_state: the group's month: partial, provisional, final (past the lookback) or signed_off (`perks close`),
--     as the report and `perks status` say (src/closes/month-state.ts)
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   unique: organisation_group_id, month, user_id, order_currency
--   not_null: organisation_group_id, month

with signed_rules as (

    -- the signed-off months' own rules (usually none differ): a small side to join, most orders use the build's
    select organisation_group_id, month, revenue_statuses from stg_month_states where revenue_statuses is not null

),

rated as (

    -- each order with its month and whether its status counts as revenue (revenue_monthly's is_recognised)
    select
        orders.organisation_group_id,
        cast(date_trunc('month', orders.order_date) as date) as month,
        orders.user_id,
        orders.order_currency,
        orders.order_saving,
        orders.face_value,
        orders.order_credit,
        coalesce(list_contains(
            coalesce(signed.revenue_statuses, getvariable('revenue_statuses')), orders.order_status
        ), false) as is_recognised
    from stg_orders as orders
    left join signed_rules as signed
        on orders.organisation_group_id = signed.organisation_group_id
        and cast(date_trunc('month', orders.order_date) as date) = signed.month

),

orders as (

    -- orders of no current user (anonymised, unknown, no email: user_id null) add up to one row per
    -- group, month and currency
    select
        organisation_group_id,
        month,
        user_id,
        order_currency,
        count(*) as orders,
        cast(coalesce(sum(order_saving), 0) as decimal(18, 2)) as order_saving,
        cast(coalesce(sum(face_value), 0) as decimal(18, 2)) as face_value,
        cast(coalesce(sum(order_credit), 0) as decimal(18, 2)) as credit_spent,
        count(*) filter (where is_recognised) as recognised_orders,
        cast(coalesce(sum(order_saving) filter (where is_recognised), 0) as decimal(18, 2)) as recognised_order_saving
    from rated
    group by organisation_group_id, month, user_id, order_currency

),

redemptions as (

    select
        organisation_group_id,
        window_start as month,
        user_id,
        cast(sum(all_redemptions_count) as bigint) as redemptions,
        cast(sum(egift_orders_count) as bigint) as egift_orders,
        cast(coalesce(sum(egift_savings), 0) as decimal(18, 2)) as egift_savings,
        cast(coalesce(sum(egift_face_value), 0) as decimal(18, 2)) as egift_face_value
    from stg_redemption_stats
    group by all
    having coalesce(sum(all_redemptions_count), 0) > 0
        or coalesce(sum(egift_orders_count), 0) > 0
        or coalesce(sum(egift_savings), 0) <> 0
        or coalesce(sum(egift_face_value), 0) <> 0

),

redemptions_placed as (

    -- redemption statistics carry no currency: they go to the user's first currency of the month
    -- (null when the user had no orders that month)
    select redemptions.*, min(orders.order_currency) as order_currency
    from redemptions
    left join orders
        on redemptions.organisation_group_id = orders.organisation_group_id
        and redemptions.month = orders.month
        and redemptions.user_id = orders.user_id
    group by all

),

joined as (

    select
        coalesce(orders.organisation_group_id, placed.organisation_group_id) as organisation_group_id,
        coalesce(orders.month, placed.month) as month,
        coalesce(orders.user_id, placed.user_id) as user_id,
        coalesce(orders.order_currency, placed.order_currency) as order_currency,
        coalesce(orders.orders, 0) as orders,
        coalesce(orders.order_saving, 0) as order_saving,
        coalesce(orders.face_value, 0) as face_value,
        coalesce(orders.credit_spent, 0) as credit_spent,
        coalesce(orders.recognised_orders, 0) as recognised_orders,
        coalesce(orders.recognised_order_saving, 0) as recognised_order_saving,
        coalesce(placed.redemptions, 0) as redemptions,
        coalesce(placed.egift_orders, 0) as egift_orders,
        coalesce(placed.egift_savings, 0) as egift_savings,
        coalesce(placed.egift_face_value, 0) as egift_face_value
    from orders
    full outer join redemptions_placed as placed
        on orders.organisation_group_id = placed.organisation_group_id
        and orders.month = placed.month
        and orders.user_id = placed.user_id
        and orders.order_currency is not distinct from placed.order_currency

),

final as (

    select
        joined.organisation_group_id,
        joined.month,
        joined.user_id,
        users.user_uid,
        joined.user_id is null as is_unattributed,
        joined.order_currency,
        joined.orders,
        joined.order_saving,
        joined.face_value,
        joined.credit_spent,
        joined.redemptions,
        joined.egift_orders,
        joined.egift_savings,
        joined.egift_face_value,
        joined.recognised_orders,
        joined.recognised_order_saving,
        coalesce(states.month_state, 'provisional'::month_state) as month_state,
        coalesce(groups.is_sandbox, false) as is_test_group
    from joined
    left join stg_users as users
        on joined.organisation_group_id = users.organisation_group_id
        and joined.user_id = users.user_id
    left join stg_month_states as states
        on joined.organisation_group_id = states.organisation_group_id
        and joined.month = states.month
    left join stg_groups as groups
        on joined.organisation_group_id = groups.organisation_group_id

)

select * from final
