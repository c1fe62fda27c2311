-- model: revenue_monthly
-- One definition of revenue: per group, month and currency, the mart's recognised rows (is_recognised) sum to the
-- report's headline. Open month: the headline is the staged orders whose status is in PERKS_REVENUE_STATUSES (the
-- build's variable revenue_statuses). Closed month: the headline is the one the close froze (close_figures, the
-- statuses of the rule in its record), against group_revenue_as_closed; its figures as now use the same rule.
-- Returns the cells whose recognised revenue differs.

with rules as (

    select organisation_group_id, month, revenue_statuses from close_records

),

mart as (

    select
        organisation_group_id,
        month,
        order_currency,
        sum(group_revenue) filter (where is_recognised) as recognised,
        sum(group_revenue_as_closed) filter (where is_recognised) as recognised_as_closed
    from revenue_monthly
    group by all

),

by_status as (

    -- the orders summed by status first (a few rows a month), the rule then applied to those rows, not to each order
    select
        organisation_group_id,
        cast(date_trunc('month', order_date) as date) as month,
        order_currency,
        order_status,
        sum(group_revenue) as group_revenue
    from stg_orders
    group by all

),

staged as (

    select
        o.organisation_group_id,
        o.month,
        o.order_currency,
        sum(o.group_revenue) filter (
            where list_contains(coalesce(r.revenue_statuses, getvariable('revenue_statuses')), o.order_status)
        ) as recognised
    from by_status as o
    left join rules as r
        on o.organisation_group_id = r.organisation_group_id
        and o.month = r.month
    group by all

),

signed as (

    select
        f.organisation_group_id,
        f.month,
        f.order_currency,
        sum(f.group_revenue) filter (where list_contains(r.revenue_statuses, f.order_status)) as recognised
    from close_figures as f
    join rules as r using (organisation_group_id, month)
    group by all

)

select
    mart.organisation_group_id,
    mart.month,
    mart.order_currency,
    mart.recognised as mart_recognised,
    staged.recognised as staged_recognised,
    mart.recognised_as_closed as mart_recognised_as_closed,
    signed.recognised as signed_recognised
from mart
left join staged
    on mart.organisation_group_id = staged.organisation_group_id
    and mart.month = staged.month
    and mart.order_currency is not distinct from staged.order_currency
left join signed
    on mart.organisation_group_id = signed.organisation_group_id
    and mart.month = signed.month
    and mart.order_currency is not distinct from signed.order_currency
where coalesce(mart.recognised, 0) <> coalesce(staged.recognised, 0)
    or coalesce(mart.recognised_as_closed, 0) <> coalesce(signed.recognised, 0)
