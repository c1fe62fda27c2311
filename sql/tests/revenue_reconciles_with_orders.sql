-- model: revenue_monthly
-- Reconciliation: per group and currency, the order count and every revenue column summed over
-- revenue_monthly equal the same sums over the staged orders. Returns the groups/currencies that differ.
-- A missing row counts as zero: a closed month keeps zero rows in revenue_monthly for a currency it had at its
-- close and has no order in now, so a group/currency can sum to zero there and have no staged order at all.

with mart as (

    select
        organisation_group_id,
        order_currency,
        sum(orders) as orders,
        sum(face_value) as face_value,
        sum(order_total_paid) as order_total_paid,
        sum(order_credit) as order_credit,
        sum(order_saving) as order_saving,
        sum(group_revenue) as group_revenue
    from revenue_monthly
    group by all

),

staged as (

    select
        organisation_group_id,
        order_currency,
        count(*) as orders,
        coalesce(sum(face_value), 0) as face_value,
        coalesce(sum(order_total_paid), 0) as order_total_paid,
        coalesce(sum(order_credit), 0) as order_credit,
        coalesce(sum(order_saving), 0) as order_saving,
        coalesce(sum(group_revenue), 0) as group_revenue
    from stg_orders
    group by all

)

select
    coalesce(mart.organisation_group_id, staged.organisation_group_id) as organisation_group_id,
    coalesce(mart.order_currency, staged.order_currency) as order_currency,
    mart.orders as mart_orders,
    staged.orders as staged_orders,
    mart.face_value as mart_face_value,
    staged.face_value as staged_face_value,
    mart.group_revenue as mart_group_revenue,
    staged.group_revenue as staged_group_revenue
from mart
full outer join staged
    on mart.organisation_group_id = staged.organisation_group_id
    and mart.order_currency is not distinct from staged.order_currency
where coalesce(mart.orders, 0) <> coalesce(staged.orders, 0)
    or coalesce(mart.face_value, 0) <> coalesce(staged.face_value, 0)
    or coalesce(mart.order_total_paid, 0) <> coalesce(staged.order_total_paid, 0)
    or coalesce(mart.order_credit, 0) <> coalesce(staged.order_credit, 0)
    or coalesce(mart.order_saving, 0) <> coalesce(staged.order_saving, 0)
    or coalesce(mart.group_revenue, 0) <> coalesce(staged.group_revenue, 0)
