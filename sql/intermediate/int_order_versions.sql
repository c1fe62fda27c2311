-- Order history: one row per version of an order (its status and money) that an extract observed, with when
-- it was first and last seen, like a dbt snapshot. Built from the lake's append-only history stream
-- (order_versions: every record new to its window or changed since it was last landed) and the current
-- orders (stg_orders: each current row is an observation too), so a window replaced by a re-read loses no version.
-- Consecutive observations with the same values are one version; a version seen again after another
-- (A, B, A) is a new version. valid_to is the next version's valid_from (null: the current version).
-- An order that a re-read of its window no longer listed gets a version of its own with is_removed true and
-- null values (the extract appends that observation to the history: src/extract/windowed-job.ts); listed again
-- later, it gets a new version after it.
-- Cost: every order is observed at least twice (its first landing in the history, its current row), so the
-- observations are first aggregated per order (one hash aggregate): an order whose observations all carry
-- the same values (nearly all of them) is one version straight away; only orders with more than one set
-- of values are ranked in time. Values are compared by a 64-bit hash of the versioned columns.
-- A view: the whole history is computed when it is read (about 2.4 CPU-s per million orders as a table);
-- revenue_adjustments reads only the orders of closed months that changed after their close.
-- grain: one row per organisation_group_id, order_id, valid_from
-- key: organisation_group_id, order_id, valid_from
-- materialized: view
-- columns:
--   organisation_group_id: the group
--   order_id: the order
--   version: 1 for the first version observed, then 2, 3, …
--   order_date: the group-local day of the window the version was extracted with
--   order_status: the order's status in this version
--   order_currency: the currency in this version
--   face_value: face value in this version
--   order_total_paid: what the user paid, in this version
--   order_credit: credit spent, in this version
--   order_saving: the user's saving, in this version
--   group_revenue: the group's revenue, in this version
--   valid_from: when an extract first saw this version (UTC)
--   last_seen_at: when an extract last saw this version (UTC)
--   valid_to: when the next version was first seen (UTC); null for the current version
--   is_current: true for the latest version
--   is_removed: true for a version in which the API no longer listed the order (its values are null)
-- (no data tests: a test would compute the whole view at every build; test/close/order-history.test.ts checks it)

with observed as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        order_id,
        cast(order_date as date) as order_date,
        order_status, order_currency, face_value, order_total_paid, order_credit, order_saving, group_revenue,
        coalesce(is_removed, false) as is_removed,
        _extracted_at as observed_at
    from lake_order_versions
    union all
    -- the current orders, as staged (already read from the lake once, deduplicated)
    select
        organisation_group_id, order_id, order_date,
        order_status, order_currency, face_value, order_total_paid, order_credit, order_saving, group_revenue,
        false as is_removed,
        extracted_at
    from stg_orders

),

hashed as (

    select
        *,
        hash(
            order_date, order_status, order_currency, face_value, order_total_paid, order_credit, order_saving,
            group_revenue, is_removed
        ) as vh
    from observed

),

per_order as (

    select
        organisation_group_id,
        order_id,
        min(vh) <> max(vh) as has_changed,
        any_value(order_date) as order_date,
        any_value(order_status) as order_status,
        any_value(order_currency) as order_currency,
        any_value(face_value) as face_value,
        any_value(order_total_paid) as order_total_paid,
        any_value(order_credit) as order_credit,
        any_value(order_saving) as order_saving,
        any_value(group_revenue) as group_revenue,
        any_value(is_removed) as is_removed,
        min(observed_at) as valid_from,
        max(observed_at) as last_seen_at
    from hashed
    group by organisation_group_id, order_id

),

unchanged as (

    select
        organisation_group_id, order_id, 1::bigint as version, order_date, order_status, order_currency, face_value,
        order_total_paid, order_credit, order_saving, group_revenue, valid_from, last_seen_at,
        null::timestamptz as valid_to, true as is_current, is_removed
    from per_order
    where not has_changed

),

changed_observations as (

    select hashed.*
    from hashed
    semi join (select organisation_group_id, order_id from per_order where has_changed) as c
        using (organisation_group_id, order_id)

),

marked as (

    select
        *,
        case when lag(vh) over w = vh then 0 else 1 end as starts_version
    from changed_observations
    -- ties (the same values seen at the same instant) are peers: the running sum below uses the RANGE
    -- frame, so they share one version whichever of them lag() saw first
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

versions as (

    select
        organisation_group_id,
        order_id,
        cast(version as bigint) as version,
        any_value(order_date) as order_date,
        any_value(order_status) as order_status,
        any_value(order_currency) as order_currency,
        any_value(face_value) as face_value,
        any_value(order_total_paid) as order_total_paid,
        any_value(order_credit) as order_credit,
        any_value(order_saving) as order_saving,
        any_value(group_revenue) as group_revenue,
        any_value(is_removed) as is_removed,
        min(observed_at) as valid_from,
        max(observed_at) as last_seen_at
    from numbered
    group by organisation_group_id, order_id, version

),

ranked as (

    select
        *,
        lead(valid_from) over (partition by organisation_group_id, order_id order by version) as valid_to,
        lead(valid_from) over (partition by organisation_group_id, order_id order by version) is null as is_current
    from versions

),

final as (

    select * from unchanged
    union all by name
    select * from ranked

)

select * from final
