-- model: savings_monthly
-- One rule of what counts (issue 43): per group, month and currency, savings_monthly's recognised orders and
-- their savings (recognised_orders, recognised_order_saving) equal revenue_monthly's orders and order_saving of
-- the rows where is_recognised: savings follow the revenue statuses rule (PERKS_REVENUE_STATUSES, or a signed-off
-- month's rule). Returns the rows that differ; a missing row counts as zero on either side.

with mart as (

    select
        organisation_group_id,
        month,
        order_currency,
        sum(recognised_orders) as orders,
        sum(recognised_order_saving) as order_saving
    from savings_monthly
    where orders > 0
    group by all

),

revenue as (

    select organisation_group_id, month, order_currency, sum(orders) as orders, sum(order_saving) as order_saving
    from revenue_monthly
    where is_recognised
    group by all

)

select
    coalesce(mart.organisation_group_id, revenue.organisation_group_id) as organisation_group_id,
    coalesce(mart.month, revenue.month) as month,
    coalesce(mart.order_currency, revenue.order_currency) as order_currency,
    mart.orders as savings_recognised_orders,
    revenue.orders as revenue_recognised_orders,
    mart.order_saving as savings_recognised_order_saving,
    revenue.order_saving as revenue_recognised_order_saving
from mart
full outer join revenue
    on mart.organisation_group_id = revenue.organisation_group_id
    and mart.month = revenue.month
    and mart.order_currency is not distinct from revenue.order_currency
where coalesce(mart.orders, 0) <> coalesce(revenue.orders, 0)
    or coalesce(mart.order_saving, 0) <> coalesce(revenue.order_saving, 0)
