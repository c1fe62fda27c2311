-- model: savings_monthly
-- Reconciliation: per group, month and currency, savings_monthly (attributed users plus the unattributed
-- rows) holds every order and its saving exactly once. Compared with revenue_monthly, which is itself
-- reconciled with the staged orders (revenue_reconciles_with_orders.sql), so the check reads two small
-- aggregates instead of every order again. Returns the rows that differ. A missing row counts as zero on either
-- side (revenue_monthly's zero rows of a closed month: a currency it had at the close and has no order in now).
-- One rule of what counts (issue 43), in the same pass: the recognised orders and savings (recognised_orders,
-- recognised_order_saving) equal revenue_monthly's orders and order_saving where is_recognised.

with mart as (

    select
        organisation_group_id,
        month,
        order_currency,
        sum(orders) as orders,
        sum(order_saving) as order_saving,
        sum(recognised_orders) as recognised_orders,
        sum(recognised_order_saving) as recognised_order_saving
    from savings_monthly
    where orders > 0
    group by all

),

revenue as (

    select
        organisation_group_id,
        month,
        order_currency,
        sum(orders) as orders,
        sum(order_saving) as order_saving,
        coalesce(sum(orders) filter (where is_recognised), 0) as recognised_orders,
        coalesce(sum(order_saving) filter (where is_recognised), 0) as recognised_order_saving
    from revenue_monthly
    group by all

)

select
    coalesce(mart.organisation_group_id, revenue.organisation_group_id) as organisation_group_id,
    coalesce(mart.month, revenue.month) as month,
    coalesce(mart.order_currency, revenue.order_currency) as order_currency,
    mart.orders as savings_orders,
    revenue.orders as revenue_orders,
    mart.order_saving as savings_order_saving,
    revenue.order_saving as revenue_order_saving,
    mart.recognised_orders as savings_recognised_orders,
    revenue.recognised_orders as revenue_recognised_orders,
    mart.recognised_order_saving as savings_recognised_order_saving,
    revenue.recognised_order_saving as revenue_recognised_order_saving
from mart
full outer join revenue
    on mart.organisation_group_id = revenue.organisation_group_id
    and mart.month = revenue.month
    and mart.order_currency is not distinct from revenue.order_currency
where coalesce(mart.orders, 0) <> coalesce(revenue.orders, 0)
    or coalesce(mart.order_saving, 0) <> coalesce(revenue.order_saving, 0)
    or coalesce(mart.recognised_orders, 0) <> coalesce(revenue.recognised_orders, 0)
    or coalesce(mart.recognised_order_saving, 0) <> coalesce(revenue.recognised_order_saving, 0)
