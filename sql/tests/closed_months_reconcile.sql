-- model: revenue_adjustments
-- severity: warn
-- Closed months reconcile: per group, closed month, currency and status, the figures as closed plus the moves of
-- the month's adjustments equal the figures as now (revenue_monthly). An adjustment moves an order out of the
-- cell it was in (its before currency and status; none for a late order or one listed again) into the cell it is
-- in now (none for a removed order). Returns the cells that do not add up.
-- A warning, not an error: the closed figures are the close record's and never change, so a cell that does not
-- add up (a lake restored from an older copy, versions lost before the history stream existed) must not stop the
-- build of every open month; the build reports it (exit 4) and finance asks why.

with closed as (

    select organisation_group_id, month, order_currency, order_status,
        orders_as_closed as orders, group_revenue_as_closed as group_revenue, face_value_as_closed as face_value
    from revenue_monthly
    where is_closed

),

now as (

    select organisation_group_id, month, order_currency, order_status, orders, group_revenue, face_value
    from revenue_monthly
    where is_closed

),

moves as (

    select organisation_group_id, month, before_currency as order_currency, before_status as order_status,
        -1 as orders, -coalesce(before_group_revenue, 0) as group_revenue, -coalesce(before_face_value, 0) as face_value
    from revenue_adjustments
    where adjustment_kind not in ('late order', 'listed again')
    union all
    select organisation_group_id, month, order_currency, after_status,
        1, coalesce(after_group_revenue, 0), coalesce(after_face_value, 0)
    from revenue_adjustments
    where adjustment_kind <> 'removed'

),

sides as (

    select * from closed
    union all
    select * from moves
    union all
    select organisation_group_id, month, order_currency, order_status, -orders, -group_revenue, -face_value from now

),

final as (

    select
        organisation_group_id, month, order_currency, order_status,
        sum(orders) as orders_off, sum(group_revenue) as group_revenue_off, sum(face_value) as face_value_off
    from sides
    group by all
    having sum(orders) <> 0 or sum(group_revenue) <> 0 or sum(face_value) <> 0

)

select * from final
