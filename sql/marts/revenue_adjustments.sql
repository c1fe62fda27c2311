-- Adjustments to closed months, for finance: every change to an order of a month signed off with `perks close`
-- that an extract first saw AFTER the close (a refund, a late order, a money correction, an order the API no
-- longer lists, a new status or currency). The closed
-- figures never change (they live in the close record and in revenue_monthly's *_as_closed columns); the
-- change is booked in the group-local month in which it was observed (booked_month).
-- Found through the history stream (lake order_versions: an extract appends every order it sees new or
-- changed), so only those orders are ranked; their versions are those of int_order_versions.
-- One row per new version of such an order: before_* is the version it replaced (null for a late order,
-- unknown at the close), after_* the new one (null for a removed order: a re-read of its window no longer
-- listed it); *_change = after − before (a missing side counted as 0). An order listed again after a removal
-- is 'listed again' (before_* null, orders_change 1).
-- How to read: as closed + the changes of its adjustments = as now (revenue_monthly). Never add the
-- changes to revenue_monthly's current columns: they are already in them. A status change moves an
-- order's money from one order_status to another (Complete → Refunded: group_revenue_change 0, but the
-- order's revenue leaves Complete): read it with before_status and after_status.
-- grain: one row per organisation_group_id, order_id, observed_at
-- key: organisation_group_id, order_id, observed_at
-- columns:
--   organisation_group_id: the group
--   month: the closed month the order belongs to (first day of the group-local month of its order_date)
--   order_id: the order
--   booked_month: first day of the group-local month in which the change was observed (an open month)
--   observed_at: when an extract first saw the change (UTC)
--   closed_at: when the month was closed (UTC)
--   close_record_hash: the hash of the close record in force
--   adjustment_kind: late order (unknown at the close), removed (no longer listed by the API), listed again
--     (after a removal), status, money, or status and money
--   before_status: the order's status before the change (null for a late order)
--   after_status: the order's status after the change (null for a removed order)
--   order_currency: the order's currency after the change (a removed order: its currency before)
--   before_currency: the order's currency before the change (null for a late order)
--   before_face_value: face value before
--   after_face_value: face value after
--   before_order_total_paid: paid before
--   after_order_total_paid: paid after
--   before_group_revenue: group revenue before
--   after_group_revenue: group revenue after
--   before_is_recognised: before_status is recognised revenue under the rule the month was closed under
--     (PERKS_REVENUE_STATUSES at the close); false for a late order
--   after_is_recognised: after_status is recognised revenue under that rule; false for a removed order
--   orders_change: 1 for a late order or one listed again, -1 for a removed order, else 0
--   face_value_change: after − before face value
--   order_total_paid_change: after − before paid
--   order_credit_change: after − before credit
--   order_saving_change: after − before saving
--   group_revenue_change: after − before group revenue
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   unique: organisation_group_id, order_id, observed_at
--   not_null: organisation_group_id, month, order_id, booked_month, observed_at, adjustment_kind, is_test_group

with closes as (

    select organisation_group_id, month, closed_at, record_hash, revenue_statuses from close_records

),

changed as (

    -- orders of a closed month with an observation after the close: the history stream gets a row for every
    -- order an extract sees new or changed, so these are all of them, found without computing any history.
    -- Only the closed months' folders are read: a row sits in the month folder of its order_date, and DuckDB
    -- skips the other folders' files for an IN on the folder column (not through the cast of order_date, and
    -- not with an OR beside it). Folders of the earlier day layout have no order_month: read as before.
    select distinct
        cast(h.organisation_group_id as bigint) as organisation_group_id,
        h.order_id, k.month, k.closed_at, k.record_hash, k.revenue_statuses
    from (
        select * from lake_order_versions
        where order_month in (select strftime(month, '%Y-%m') from closes)
        union all
        select * from lake_order_versions where order_month is null
    ) as h
    join closes as k
        on cast(h.organisation_group_id as bigint) = k.organisation_group_id
        and cast(date_trunc('month', cast(h.order_date as date)) as date) = k.month
    where h._extracted_at > k.closed_at

),

observed as (

    -- every observation of those orders: their history rows and their current staged row
    select
        cast(h.organisation_group_id as bigint) as organisation_group_id, h.order_id,
        cast(h.order_date as date) as order_date, h.order_status, h.order_currency, h.face_value, h.order_total_paid,
        h.order_credit, h.order_saving, h.group_revenue,
        coalesce(h.is_removed, false) as is_removed, h._extracted_at as observed_at
    from lake_order_versions as h
    semi join changed
        on cast(h.organisation_group_id as bigint) = changed.organisation_group_id
        and h.order_id = changed.order_id
    union all
    select
        s.organisation_group_id, s.order_id, s.order_date, s.order_status, s.order_currency, s.face_value,
        s.order_total_paid, s.order_credit, s.order_saving, s.group_revenue, false, s.extracted_at
    from stg_orders as s
    semi join changed
        on s.organisation_group_id = changed.organisation_group_id
        and s.order_id = changed.order_id

),

marked as (

    -- the same versions as int_order_versions (consecutive equal values are one version), for these orders only
    select
        *,
        hash(
            order_date, order_status, order_currency, face_value, order_total_paid, order_credit, order_saving,
            group_revenue, is_removed
        ) as vh,
        case when lag(vh) over w = vh then 0 else 1 end as starts_version
    from observed
    window w as (partition by organisation_group_id, order_id order by observed_at, vh)

),

numbered as (

    select
        *,
        sum(starts_version) over (
            partition by organisation_group_id, order_id
            order by observed_at, vh range between unbounded preceding and current row
        ) as version
    from marked

),

order_versions as (

    select
        organisation_group_id, order_id, cast(version as bigint) as version,
        any_value(order_date) as order_date, any_value(order_status) as order_status,
        any_value(order_currency) as order_currency, any_value(face_value) as face_value,
        any_value(order_total_paid) as order_total_paid, any_value(order_credit) as order_credit,
        any_value(order_saving) as order_saving, any_value(group_revenue) as group_revenue,
        any_value(is_removed) as is_removed,
        min(observed_at) as valid_from
    from numbered
    group by organisation_group_id, order_id, version

),

versions as (

    select
        c.month, c.closed_at, c.record_hash, c.revenue_statuses, v.*,
        lag(v.order_status) over w as before_status,
        lag(v.order_currency) over w as before_currency,
        lag(v.face_value) over w as before_face_value,
        lag(v.order_total_paid) over w as before_order_total_paid,
        lag(v.order_credit) over w as before_order_credit,
        lag(v.order_saving) over w as before_order_saving,
        lag(v.group_revenue) over w as before_group_revenue,
        lag(v.is_removed) over w as before_is_removed,
        lag(v.version) over w as before_version
    from order_versions as v
    join changed as c using (organisation_group_id, order_id)
    window w as (partition by v.organisation_group_id, v.order_id order by v.version)

),

final as (

    select
        versions.organisation_group_id,
        versions.month,
        versions.order_id,
        cast(
            date_trunc('month', timezone(coalesce(stg_groups.timezone, 'UTC'), versions.valid_from)) as date
        ) as booked_month,
        versions.valid_from as observed_at,
        versions.closed_at,
        versions.record_hash as close_record_hash,
        case
            when versions.is_removed then 'removed'
            when versions.before_version is null then 'late order'
            when versions.before_is_removed then 'listed again'
            when versions.before_status is distinct from versions.order_status
                and (versions.before_group_revenue is distinct from versions.group_revenue
                    or versions.before_face_value is distinct from versions.face_value
                    or versions.before_order_total_paid is distinct from versions.order_total_paid)
                then 'status and money'
            when versions.before_status is distinct from versions.order_status then 'status'
            else 'money'
        end as adjustment_kind,
        versions.before_status,
        versions.order_status as after_status,
        case when versions.is_removed then versions.before_currency else versions.order_currency end as order_currency,
        versions.before_currency,
        versions.before_face_value,
        versions.face_value as after_face_value,
        versions.before_order_total_paid,
        versions.order_total_paid as after_order_total_paid,
        versions.before_group_revenue,
        versions.group_revenue as after_group_revenue,
        coalesce(list_contains(versions.revenue_statuses, versions.before_status), false) as before_is_recognised,
        not versions.is_removed
        and coalesce(list_contains(versions.revenue_statuses, versions.order_status), false) as after_is_recognised,
        case
            when versions.is_removed then -1
            when versions.before_version is null or versions.before_is_removed then 1
            else 0
        end as orders_change,
        coalesce(versions.face_value, 0) - coalesce(versions.before_face_value, 0) as face_value_change,
        coalesce(versions.order_total_paid, 0)
            - coalesce(versions.before_order_total_paid, 0) as order_total_paid_change,
        coalesce(versions.order_credit, 0) - coalesce(versions.before_order_credit, 0) as order_credit_change,
        coalesce(versions.order_saving, 0) - coalesce(versions.before_order_saving, 0) as order_saving_change,
        coalesce(versions.group_revenue, 0) - coalesce(versions.before_group_revenue, 0) as group_revenue_change,
        coalesce(stg_groups.is_sandbox, false) as is_test_group
    from versions
    left join stg_groups
        on versions.organisation_group_id = stg_groups.organisation_group_id
    where versions.valid_from > versions.closed_at

)

select * from final
