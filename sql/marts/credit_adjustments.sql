-- Adjustments to the credit liability of closed months, for finance: a month signed off with `perks close`
-- froze the group's credit liability at its end (credit_liability_monthly's *_as_closed columns); when the
-- lake later gives that month end other figures (a credit snapshot of a day on or before it landed after the
-- close, a damaged snapshot file removed, a lake restored), the difference is one row here, booked in the
-- month in which it was observed. The closed figures never change.
-- observed_at: when the latest credit row counted at the month end LANDED, when that was after the close (the
-- snapshot that brought the change): its run's finish (extract_runs, from the run's manifest; _extracted_at is when
-- the run started, and the snapshot day is that start's day, so a snapshot of the month's last day is extracted
-- before the close by construction, yet may land after it: a run started that evening, a shard). A row whose
-- run left no manifest (killed) counts with its _extracted_at. Otherwise (snapshots removed, a replay pinned
-- with PERKS_NOW to a day before the close, or the landing unknown) the last second of the build's as-of day (UTC),
-- since the lake keeps no trace
-- of when a file went: the row then moves with the as-of day until the month is reopened and closed again.
-- booked_month: the UTC month of observed_at (credit snapshot days are UTC days).
-- How to read: as closed + change = as now (credit_liability_monthly). Never add the changes to the
-- current columns: they are already in them.
-- grain: one row per organisation_group_id, month (closed months whose figures differ now)
-- key: organisation_group_id, month
-- columns:
--   organisation_group_id: the group
--   month: the closed month (first day); the figures are at its last day
--   booked_month: first day of the (UTC) month in which the change was observed
--   observed_at: when the change was observed (UTC), see above
--   closed_at: when the month was closed (UTC)
--   close_record_hash: the hash of the close record in force
--   before_users: users as closed
--   after_users: users now
--   before_credit_available: credit available as closed (the liability signed off)
--   after_credit_available: credit available now
--   users_change: after − before users
--   credit_available_change: after − before credit available
--   credit_granted_change: after − before credit granted
--   credit_spent_change: after − before credit spent
--   credit_expired_change: after − before credit expired
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   unique: organisation_group_id, month
--   not_null: organisation_group_id, month, booked_month, observed_at, closed_at, is_test_group

with liability as (

    -- closed months whose close froze a credit liability (users_as_closed is null when it froze none)
    select * from credit_liability_monthly where is_closed and users_as_closed is not null

),

counted as (

    -- when the latest of the snapshots counted at each closed month end landed (its run's finish; without a
    -- manifest, its extraction)
    select
        cast(c.organisation_group_id as bigint) as organisation_group_id,
        l.month,
        max(coalesce(runs.finished_at, c._extracted_at)) as last_landed_at
    from lake_credit as c
    join liability as l
        on cast(c.organisation_group_id as bigint) = l.organisation_group_id
        and cast(c._snapshot_date as date) <= l.month_end
    left join extract_runs as runs
        on runs.run_id = c._run_id
    group by all

),

changed as (

    select
        l.*,
        case
            when counted.last_landed_at > l.closed_at then counted.last_landed_at
            else timezone('UTC', cast(getvariable('as_of') as timestamp) + interval 1 day - interval 1 second)
        end as observed_at
    from liability as l
    left join counted
        on counted.organisation_group_id = l.organisation_group_id
        and counted.month = l.month
    -- null-safe: a figure a close record did not freeze (an older record) differs from any figure now
    where l.users is distinct from l.users_as_closed
        or l.credit_available is distinct from l.credit_available_as_closed
        or l.credit_granted is distinct from l.credit_granted_as_closed
        or l.credit_spent is distinct from l.credit_spent_as_closed
        or l.credit_expired is distinct from l.credit_expired_as_closed

),

final as (

    select
        changed.organisation_group_id,
        changed.month,
        cast(date_trunc('month', timezone('UTC', changed.observed_at)) as date) as booked_month,
        changed.observed_at,
        changed.closed_at,
        closes.record_hash as close_record_hash,
        changed.users_as_closed as before_users,
        changed.users as after_users,
        changed.credit_available_as_closed as before_credit_available,
        changed.credit_available as after_credit_available,
        changed.users - changed.users_as_closed as users_change,
        changed.credit_available - changed.credit_available_as_closed as credit_available_change,
        changed.credit_granted - changed.credit_granted_as_closed as credit_granted_change,
        changed.credit_spent - changed.credit_spent_as_closed as credit_spent_change,
        changed.credit_expired - changed.credit_expired_as_closed as credit_expired_change,
        changed.is_test_group
    from changed
    join close_records as closes
        on closes.organisation_group_id = changed.organisation_group_id
        and closes.month = changed.month

)

select * from final
