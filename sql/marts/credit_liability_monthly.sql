-- Credit liability for finance: the platform credit users hold at each month end, per group. Credit is a
-- liability (users can still spend it). Each user counts with the latest credit extraction whose snapshot
-- day is on or before the month end (runs refresh some users at a time, so older extractions carry forward).
-- The API names no currency for credit: amounts are in the group's credit units, never summed across groups.
-- credit_granted = available + spent + expired (the balances' identity: all credit ever granted to the user).
-- grain: one row per organisation_group_id, month
-- key: organisation_group_id, month
-- columns:
--   organisation_group_id: the group
--   month: first day of the month; the figures are at its last day (UTC snapshot days)
--   month_end: the last day of the month
--   users: users with a credit extraction on or before the month end
--   credit_available: credit the users can still spend at the month end (the liability)
--   credit_granted: credit granted to them up to then (available + spent + expired)
--   credit_spent: credit spent on orders up to then
--   credit_expired: credit expired unused up to then
--   oldest_snapshot_date: the oldest extraction carried into the month end (how stale the figure can be)
-- tests:
--   unique: organisation_group_id, month
--   not_null: organisation_group_id, month, users

with snapshots as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        user_id,
        cast(_snapshot_date as date) as snapshot_date,
        _extracted_at,
        _run_id,
        available, spent, expired
    from lake_credit

),

months as (

    select organisation_group_id, cast(m as date) as month, cast(m + interval 1 month - interval 1 day as date) as month_end
    from (select organisation_group_id, min(snapshot_date) as first_day from snapshots group by all) as firsts,
        range(date_trunc('month', first_day), date_trunc('month', getvariable('as_of')) + interval 1 day, interval 1 month) as t(m)

),

at_month_end as (

    select months.organisation_group_id, months.month, months.month_end, s.user_id, s.snapshot_date, s.available, s.spent, s.expired
    from months
    join snapshots as s
        on s.organisation_group_id = months.organisation_group_id
        and s.snapshot_date <= months.month_end
    qualify row_number() over (
        partition by months.organisation_group_id, months.month, s.user_id
        order by s.snapshot_date desc, s._extracted_at desc, s._run_id desc
    ) = 1

),

final as (

    select
        organisation_group_id,
        month,
        any_value(month_end) as month_end,
        count(*) as users,
        coalesce(sum(available), 0) as credit_available,
        coalesce(sum(available), 0) + coalesce(sum(spent), 0) + coalesce(sum(expired), 0) as credit_granted,
        coalesce(sum(spent), 0) as credit_spent,
        coalesce(sum(expired), 0) as credit_expired,
        min(snapshot_date) as oldest_snapshot_date
    from at_month_end
    group by organisation_group_id, month

)

select * from final
