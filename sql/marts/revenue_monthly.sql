-- Monthly revenue, for finance: orders and their money per group, local month, currency and status.
-- month is the first day of the group's LOCAL month (order_date is the group's local day).
-- Money is DECIMAL, summed exactly; currencies are never summed together (currency is in the grain).
-- Reconciled by sql/tests/revenue_reconciles_with_orders.sql against stg_orders.
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
-- tests:
--   unique: organisation_group_id, month, order_currency, order_status
--   not_null: organisation_group_id, month, orders

with orders as (

    select *, cast(date_trunc('month', order_date) as date) as month from stg_orders

),

final as (

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

)

select * from final
