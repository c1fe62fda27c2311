-- model: revenue_offers_monthly
-- Reconciliation: per group, month, currency and status, revenue_offers_monthly's sums over its offers
-- equal revenue_monthly's (itself reconciled with the orders). Returns the rows that differ.
-- A missing row counts as zero on either side: revenue_monthly keeps a zero row for a status a closed month had
-- at its close and has no order of now (issue 22), and revenue_offers_monthly has no row there.

with by_offer as (

    select organisation_group_id, month, order_currency, order_status,
        sum(orders) as orders, sum(face_value) as face_value, sum(group_revenue) as group_revenue
    from revenue_offers_monthly
    group by all

)

select
    coalesce(by_offer.organisation_group_id, revenue.organisation_group_id) as organisation_group_id,
    coalesce(by_offer.month, revenue.month) as month,
    coalesce(by_offer.order_currency, revenue.order_currency) as order_currency,
    coalesce(by_offer.order_status, revenue.order_status) as order_status,
    by_offer.orders as offer_orders,
    revenue.orders as revenue_orders,
    by_offer.group_revenue as offer_group_revenue,
    revenue.group_revenue as revenue_group_revenue
from by_offer
full join revenue_monthly as revenue
    on by_offer.organisation_group_id = revenue.organisation_group_id
    and by_offer.month = revenue.month
    and by_offer.order_currency is not distinct from revenue.order_currency
    and by_offer.order_status is not distinct from revenue.order_status
where coalesce(by_offer.orders, 0) <> coalesce(revenue.orders, 0)
    or coalesce(by_offer.face_value, 0) <> coalesce(revenue.face_value, 0)
    or coalesce(by_offer.group_revenue, 0) <> coalesce(revenue.group_revenue, 0)
