-- Credit liability for finance: the platform credit users hold at each month end, per group. Credit is a
-- liability (users can still spend it). Each user counts with the extraction of the month's last day; else the
-- earliest extraction after the month end (the close's refresh, a later run), rolled back to the month end from
-- its items (items granted after it left out, each item available or expired by its expires_at then; what was
-- spent after the month end and before that read counts as spent: the items do not say when); else the latest
-- extraction before (runs refresh some users at a time, so older extractions carry forward: stale_balances).
-- The API names no currency for credit: amounts are in the group's credit units, never summed across groups.
-- credit_granted = available + spent + expired (the balances' identity: all credit ever granted to the user).
-- Expiry is computed, not fetched: an item the extraction listed Available whose expires_at has passed by the
-- month end (the as-of instant, getvariable('as_of_at'), for the month that holds it) counts as expired, its
-- remaining amount moved from available to expired (credit_expired_since_read says how much).
-- As closed vs as now (issue 17): the figures are always AS NOW (the lake's snapshots today). For a month
-- signed off with `perks close`, is_closed is true and the *_as_closed columns hold the liability the close
-- froze (from the close record); as now − as closed is the month's row in credit_adjustments. A closed month
-- whose snapshots are all gone now keeps a row with zero current figures. Open months, and closes that froze no
-- credit (none extracted by the month end, or a record from before credit was frozen): *_as_closed null.
-- grain: one row per organisation_group_id, month
-- key: organisation_group_id, month
-- columns:
--   organisation_group_id: the group
--   month: first day of the month; the figures are at its last day (UTC snapshot days)
--   month_end: the last day of the month
--   users: users with a credit extraction on or before the month end, or granted credit by then (a later read)
--   credit_available: credit the users can still spend at the month end (the liability)
--   credit_granted: credit granted to them up to then (available + spent + expired)
--   credit_spent: credit spent on orders up to then
--   credit_expired: credit expired unused up to then
--   credit_expired_since_read: of credit_expired, what expired after its extraction and before the month end
--     (or the as-of instant): Available items past their expires_at, computed from the items
--   oldest_snapshot_date: the oldest extraction carried into the month end (how stale the figure can be)
--   stale_balances: users with credit available at the month end whose balance rests on an extraction of a day
--     before the month's last day (none after it): `perks close` refreshes them first, and refuses while any is left
--   is_closed: the month is signed off for the group (`perks close`; a reopen makes it false again)
--   closed_at: when the close in force was made (UTC); null when not closed
--   users_as_closed: users as the close froze them; null when not closed, or when the close froze no credit
--     (none extracted by then)
--   credit_available_as_closed: credit available as closed; null when not closed
--   credit_granted_as_closed: credit granted as closed; null when not closed
--   credit_spent_as_closed: credit spent as closed; null when not closed
--   credit_expired_as_closed: credit expired as closed; null when not closed
--   month_state: the group's month: partial (the extract starts after its first day), provisional (not yet past
--     the lookback), final (past the lookback: the extract will not change it) or signed_off (`perks close`); the
--     word the report and `perks status` use (src/closes/month-state.ts)
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   unique: organisation_group_id, month
--   not_null: organisation_group_id, month, users, is_closed, month_state, is_test_group

with snapshots as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        user_id,
        cast(_snapshot_date as date) as snapshot_date,
        _extracted_at,
        _run_id,
        available, spent, expired,
        credits
    from lake_credit

),

months as (

    select
        organisation_group_id,
        cast(m as date) as month,
        cast(m + interval 1 month - interval 1 day as date) as month_end,
        -- the instant the month's balances are taken at: its last microsecond, or the as-of instant if sooner
        least(
            timezone('UTC', cast(m + interval 1 month as timestamp)) - interval 1 microsecond, getvariable('as_of_at')
        ) as balance_at
    from (select organisation_group_id, min(snapshot_date) as first_day from snapshots group by all) as firsts,
        range(
            date_trunc('month', first_day), date_trunc('month', getvariable('as_of')) + interval 1 day, interval 1 month
        ) as t(m)

),

at_month_end as (

    -- per user, the read the month end rests on: the latest on the month's last day; else the earliest read
    -- after the month end that lists its items (the close's refresh, a later run), rolled back to the month end
    -- below; else the latest read before (stale: stale_balances counts it)
    select
        months.organisation_group_id, months.month, months.month_end, months.balance_at,
        s.user_id, s.snapshot_date, s.available, s.spent, s.expired,
        s.snapshot_date > months.month_end as is_after,
        bool_or(s.snapshot_date <= months.month_end) over (
            partition by months.organisation_group_id, months.month, s.user_id
        ) as read_before,
        coalesce(s.credits, []) as items
    from months
    join snapshots as s
        on s.organisation_group_id = months.organisation_group_id
        and (s.snapshot_date <= months.month_end or s.credits is not null)
    qualify row_number() over (
        partition by months.organisation_group_id, months.month, s.user_id
        order by
            case when s.snapshot_date = months.month_end then 0 when s.snapshot_date > months.month_end then 1 end,
            case when s.snapshot_date > months.month_end then s._extracted_at end,
            s._extracted_at desc,
            s._run_id desc
    ) = 1

),

measured as (

    select
        *,
        list_filter(items, lambda x: x.created_at <= balance_at) as kept,
        list_filter(items, lambda x: x.created_at <= balance_at and x.status in ('Available', 'Expired')) as held,
        list_filter(items, lambda x: x.status = 'Available' and x.expires_at <= balance_at) as lapsed
    from at_month_end

),

summed as (

    select
        *,
        cast(coalesce(list_sum([x.remaining_amount for x in lapsed]), 0) as decimal(18, 2)) as past_expiry
    from measured

),

balances as (

    -- a read on or before the month end: its balances, less the Available items past expires_at by the month end
    -- (or the as-of instant); a read after it: the items granted by the month end, each available or expired by
    -- its expires_at then, spent as read (the items do not say when they were spent)
    select
        organisation_group_id, month, month_end, user_id, snapshot_date, read_before,
        case when is_after then 0 else past_expiry end as expired_since_read,
        case
            when is_after then coalesce(list_sum([x.remaining_amount for x in held if x.expires_at > balance_at]), 0)
            else available - past_expiry
        end as available,
        case
            when is_after then coalesce(list_sum([x.amount - x.remaining_amount for x in kept]), 0)
            else spent
        end as spent,
        case
            when is_after then coalesce(list_sum([x.remaining_amount for x in held if x.expires_at <= balance_at]), 0)
            else expired + past_expiry
        end as expired
    from summed
    -- a user read only after the month end, with nothing granted by then, was no holder at it
    where not is_after or read_before or len(kept) > 0

),

final as (

    select
        organisation_group_id,
        month,
        any_value(month_end) as month_end,
        count(*) as users,
        cast(coalesce(sum(available), 0) as decimal(18, 2)) as credit_available,
        cast(coalesce(sum(available), 0) + coalesce(sum(spent), 0) + coalesce(sum(expired), 0) as decimal(18, 2))
            as credit_granted,
        cast(coalesce(sum(spent), 0) as decimal(18, 2)) as credit_spent,
        cast(coalesce(sum(expired), 0) as decimal(18, 2)) as credit_expired,
        sum(expired_since_read) as credit_expired_since_read,
        min(snapshot_date) as oldest_snapshot_date,
        count(*) filter (where snapshot_date < month_end and available <> 0) as stale_balances
    from balances
    group by organisation_group_id, month

),

with_closes as (

    select
        coalesce(now.organisation_group_id, closes.organisation_group_id) as organisation_group_id,
        coalesce(now.month, closes.month) as month,
        coalesce(now.month_end, cast(closes.month + interval 1 month - interval 1 day as date)) as month_end,
        coalesce(now.users, 0) as users,
        coalesce(now.credit_available, 0) as credit_available,
        coalesce(now.credit_granted, 0) as credit_granted,
        coalesce(now.credit_spent, 0) as credit_spent,
        coalesce(now.credit_expired, 0) as credit_expired,
        coalesce(now.credit_expired_since_read, 0) as credit_expired_since_read,
        now.oldest_snapshot_date,
        coalesce(now.stale_balances, 0) as stale_balances,
        closes.closed_at is not null as is_closed,
        closes.closed_at,
        frozen.users as users_as_closed,
        frozen.credit_available as credit_available_as_closed,
        frozen.credit_granted as credit_granted_as_closed,
        frozen.credit_spent as credit_spent_as_closed,
        frozen.credit_expired as credit_expired_as_closed,
        coalesce(states.month_state, 'provisional'::month_state) as month_state,
        coalesce(groups.is_sandbox, false) as is_test_group
    from final as now
    full outer join close_records as closes
        on now.organisation_group_id = closes.organisation_group_id
        and now.month = closes.month
    left join close_credit as frozen
        on coalesce(now.organisation_group_id, closes.organisation_group_id) = frozen.organisation_group_id
        and coalesce(now.month, closes.month) = frozen.month
    left join stg_month_states as states
        on coalesce(now.organisation_group_id, closes.organisation_group_id) = states.organisation_group_id
        and coalesce(now.month, closes.month) = states.month
    left join stg_groups as groups
        on coalesce(now.organisation_group_id, closes.organisation_group_id) = groups.organisation_group_id
    -- a closed month before the group's first credit extraction, with none frozen, is no row (as before)
    where now.month is not null or frozen.month is not null

)

select * from with_closes
