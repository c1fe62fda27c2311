-- model: savings_monthly
-- Reconciliation: per group and currency, savings_monthly (attributed users plus the unattributed rows)
-- holds every staged order and its saving exactly once. Returns the groups/currencies that differ.

with mart as (

    select organisation_group_id, order_currency, sum(orders) as orders, sum(order_saving) as order_saving
    from savings_monthly
    where orders > 0
    group by all

),

staged as (

    select organisation_group_id, order_currency, count(*) as orders, coalesce(sum(order_saving), 0) as order_saving
    from stg_orders
    group by all

)

select
    coalesce(mart.organisation_group_id, staged.organisation_group_id) as organisation_group_id,
    coalesce(mart.order_currency, staged.order_currency) as order_currency,
    mart.orders as mart_orders,
    staged.orders as staged_orders,
    mart.order_saving as mart_order_saving,
    staged.order_saving as staged_order_saving
from mart
full outer join staged
    on mart.organisation_group_id = staged.organisation_group_id
    and mart.order_currency is not distinct from staged.order_currency
where mart.orders is distinct from staged.orders
    or mart.order_saving is distinct from staged.order_saving
