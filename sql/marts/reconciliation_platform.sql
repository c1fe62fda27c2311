-- Reconciliation against the platform's own figures: per group, month and user, the bulk redemption
-- statistics the platform computed (stg_redemption_stats) against the orders in our lake for the same user
-- and month (stg_orders). Only the months the statistics were extracted for are compared.
-- The statistics' egift figures count Complete orders only (egift_cost = paid, egift_savings = saving);
-- all_redemptions_count counts every status: the lake side is summed the same way.
-- result: matched (every figure equal); explained (differs for a known reason, in explanation); differs.
-- Known reasons:
--  - month edge: the statistics count UTC days, the lake the group's local days. A local day at a month's edge is
--    partly in the UTC month beside it: east of UTC (Sydney) the month's first local day starts in the UTC month
--    before, and the next month's first day in this one; west of UTC (New York) the month's last local day ends
--    in the UTC month after, and the previous month's last day in this one (the zone's offset on that night, so
--    daylight saving counts). Orders carry no time, so the rows are explained when every figure of the
--    statistics lies between the user's lake orders that surely fall in the UTC month (those of the month's local
--    days, less the ones that may leave) and those plus the orders that may enter (of the local day beside it):
--    an order at such an edge is explained in both months' rows.
--  - days not in the lake: the extract may not hold every local day the statistics' UTC month overlaps: the month
--    is partial; or provisional, with a day on which the group has no order in the lake (not reached yet); or, west
--    of UTC, the month before is partial with no order of the group on its last day; or, east of UTC, nothing has
--    extracted the month after yet. The statistics may then count more, never less, than the lake's sure orders.
--    (A group's quiet day reads as a day not reached in a provisional month: a looser check until the month is
--    final.)
--  - unattributed orders (orders of no current user: one row per group and month with user_id null; the
--    statistics, per user, cannot hold them), and a user anonymised or no longer current (the lake cannot
--    attribute the user's orders, which sit in the unattributed row).
-- Built by intervals (src/transform/incremental.ts): a group's month is rebuilt only when its orders or
-- statistics changed, the orders of the last day of the month before or of the first day of the month after
-- changed (edges:), its month state or the state of a month beside it changed (the three lookups), a user of its
-- rows came, went or was anonymised, or its group's timezone or test flag changed.
-- grain: one row per organisation_group_id, month, user_id (user_id null: the unattributed orders)
-- key: organisation_group_id, month, user_id
-- incremental: month on organisation_group_id, month
-- lookup: stg_users(user_id) = user_id, reading is_anonymised
-- lookup: stg_groups(organisation_group_id) = organisation_group_id, reading timezone, is_sandbox
-- lookup: stg_month_states(month) = month, reading month_state
-- lookup: stg_month_states(month) = cast(month - interval 1 month as date), reading month_state
-- lookup: stg_month_states(month) = cast(month + interval 1 month as date), reading month_state
-- edges: stg_orders
-- columns:
--   organisation_group_id: the group
--   month: first day of the month (the statistics' window; the lake's group-local month)
--   user_id: the user; null for the orders of no current user
--   platform_orders: all_redemptions_count (every status); null when the statistics have no row for the user
--   lake_orders: the user's orders in the lake that month (every status)
--   platform_egift_orders: egift_orders_count (Complete)
--   lake_complete_orders: the user's Complete orders in the lake
--   platform_face_value: egift_face_value
--   lake_face_value: face value of the Complete orders
--   platform_cost: egift_cost
--   lake_cost: order_total_paid of the Complete orders
--   platform_savings: egift_savings
--   lake_savings: order_saving of the Complete orders
--   orders_difference: platform − lake, all statuses
--   face_value_difference: platform − lake, Complete face value
--   cost_difference: platform − lake, Complete cost
--   savings_difference: platform − lake, Complete savings
--   currencies: how many currencies the user's orders are in (more than one: the statistics add them together, and so
--     does this comparison)
--   result: matched, explained or differs
--   explanation: why an explained row differs; null otherwise
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   not_null: organisation_group_id, month, result
--   accepted_values: result in matched, explained, differs

with stats as (

    select
        organisation_group_id, window_start as month, user_id,
        all_redemptions_count, egift_orders_count, egift_face_value, egift_cost, egift_savings
    from stg_redemption_stats

),

compared_months as (

    select distinct organisation_group_id, month from stats

),

orders as (

    select
        organisation_group_id,
        cast(date_trunc('month', order_date) as date) as month,
        user_id, order_status, order_currency, face_value, order_total_paid, order_saving, order_date
    from stg_orders
    semi join compared_months
        on stg_orders.organisation_group_id = compared_months.organisation_group_id
        and cast(date_trunc('month', stg_orders.order_date) as date) = compared_months.month

),

lake as (

    select
        organisation_group_id, month, user_id,
        count(*) as lake_orders,
        count(*) filter (where order_status = 'Complete') as lake_complete_orders,
        -- DECIMAL(18,2) like the platform's figures (a sum is DECIMAL(38,2), stored as 128-bit integers, which
        -- DuckDB reads back about 8 times slower: 1.5 M rows of six such columns cost 6 CPU-s a read)
        cast(coalesce(sum(face_value) filter (where order_status = 'Complete'), 0) as decimal(18, 2))
            as lake_face_value,
        cast(coalesce(sum(order_total_paid) filter (where order_status = 'Complete'), 0) as decimal(18, 2))
            as lake_cost,
        cast(coalesce(sum(order_saving) filter (where order_status = 'Complete'), 0) as decimal(18, 2))
            as lake_savings,
        count(distinct order_currency) as currencies
    from orders
    group by all

),

edges as (

    -- per group and month compared, how its edge nights sit against UTC midnight: the local midnight that
    -- starts the month (and the next month) minus the UTC midnight of the same date, in seconds: negative east
    -- of UTC, positive west, zero on UTC (the zone's offset on that night, daylight saving included)
    select
        compared_months.organisation_group_id,
        compared_months.month,
        epoch(timezone(zones.timezone, compared_months.month::timestamp))
            - epoch(compared_months.month::timestamp) as start_shift,
        epoch(timezone(zones.timezone, compared_months.month::timestamp + interval 1 month))
            - epoch(compared_months.month::timestamp + interval 1 month) as end_shift
    from compared_months
    left join (
        select organisation_group_id, coalesce(timezone, 'UTC') as timezone from stg_groups
    ) as zones
        on compared_months.organisation_group_id = zones.organisation_group_id

),

edge_orders as (

    -- orders that may be in another UTC month than their local one: the month's own first day east of UTC or
    -- last day west of it (may leave), and the previous month's last day west of UTC or the next month's first
    -- day east of it (may enter)
    select orders.*, false as is_entering
    from orders
    inner join edges
        on orders.organisation_group_id = edges.organisation_group_id
        and orders.month = edges.month
    where (orders.order_date = edges.month and edges.start_shift < 0)
        or (orders.order_date = last_day(edges.month) and edges.end_shift > 0)
    union all by name
    select
        beside.organisation_group_id, edges.month, beside.user_id, beside.order_status, beside.order_currency,
        beside.face_value, beside.order_total_paid, beside.order_saving, beside.order_date, true as is_entering
    from (
        -- a day at a month's edge, with the month it borders
        select
            *,
            case
                when day(order_date) = 1 then cast(order_date - interval 1 month as date) else order_date + 1
            end as bordered_month
        from stg_orders
        where day(order_date) = 1 or order_date = last_day(order_date)
    ) as beside
    inner join edges
        on beside.organisation_group_id = edges.organisation_group_id
        and beside.bordered_month = edges.month
    where (day(beside.order_date) = 1 and edges.end_shift < 0)
        or (day(beside.order_date) <> 1 and edges.start_shift > 0)

),

edge_lake as (

    -- per user, the figures of the orders that may leave the UTC month and of those that may enter it
    -- (DECIMAL(18,2), as the lake's sums: 128-bit sums would make every bound below 128-bit arithmetic)
    select
        organisation_group_id, month, user_id,
        count(*) filter (where not is_entering) as leaving_orders,
        count(*) filter (where is_entering) as entering_orders,
        count(*) filter (where not is_entering and order_status = 'Complete') as leaving_complete,
        count(*) filter (where is_entering and order_status = 'Complete') as entering_complete,
        cast(coalesce(sum(face_value) filter (where not is_entering and order_status = 'Complete'), 0)
            as decimal(18, 2)) as leaving_face_value,
        cast(coalesce(sum(face_value) filter (where is_entering and order_status = 'Complete'), 0)
            as decimal(18, 2)) as entering_face_value,
        cast(coalesce(sum(order_total_paid) filter (where not is_entering and order_status = 'Complete'), 0)
            as decimal(18, 2)) as leaving_cost,
        cast(coalesce(sum(order_total_paid) filter (where is_entering and order_status = 'Complete'), 0)
            as decimal(18, 2)) as entering_cost,
        cast(coalesce(sum(order_saving) filter (where not is_entering and order_status = 'Complete'), 0)
            as decimal(18, 2)) as leaving_savings,
        cast(coalesce(sum(order_saving) filter (where is_entering and order_status = 'Complete'), 0)
            as decimal(18, 2)) as entering_savings
    from edge_orders
    where user_id is not null
    group by all

),

states as (

    -- the states of the month and of the months either side (null: no row, nothing has extracted that month yet)
    select
        edges.organisation_group_id, edges.month, edges.start_shift, edges.end_shift,
        coalesce(this.month_state::varchar, 'provisional') as month_state,
        before.month_state::varchar as state_before,
        after.month_state::varchar as state_after
    from edges
    left join stg_month_states as this
        on edges.organisation_group_id = this.organisation_group_id
        and edges.month = this.month
    left join stg_month_states as before
        on edges.organisation_group_id = before.organisation_group_id
        and cast(edges.month - interval 1 month as date) = before.month
    left join stg_month_states as after
        on edges.organisation_group_id = after.organisation_group_id
        and cast(edges.month + interval 1 month as date) = after.month

),

open_days as (

    -- the local days of a provisional month on which the group has orders in the lake
    select organisation_group_id, month, count(*) as days
    from (
        select distinct orders.organisation_group_id, orders.month, orders.order_date
        from orders
        semi join states
            on orders.organisation_group_id = states.organisation_group_id
            and orders.month = states.month
            and states.month_state = 'provisional'
    )
    group by all

),

entering_days as (

    -- whether the group has orders in the lake on the local day before the month
    select organisation_group_id, month, true as has_day_before
    from edge_orders
    where is_entering and order_date < month
    group by all

),

coverage as (

    -- whether the lake may lack a local day the statistics' UTC month overlaps: the month is partial (the
    -- extract starts after its first day); it is provisional and the group has no order on one of its days (not
    -- reached yet); west of UTC, the month before is partial and the group has no order on its last day (before
    -- the extract's first day); east of UTC, nothing has extracted the month after yet (no state)
    select
        states.organisation_group_id,
        states.month,
        states.month_state = 'partial'
        or (states.month_state = 'provisional' and coalesce(open_days.days, 0) < day(last_day(states.month)))
        or (states.start_shift > 0 and states.state_before = 'partial'
            and not coalesce(entering_days.has_day_before, false))
        or (states.end_shift < 0 and states.state_after is null) as lacks_days
    from states
    left join open_days
        on states.organisation_group_id = open_days.organisation_group_id
        and states.month = open_days.month
    left join entering_days
        on states.organisation_group_id = entering_days.organisation_group_id
        and states.month = entering_days.month

),

joined as (

    select
        coalesce(stats.organisation_group_id, lake.organisation_group_id) as organisation_group_id,
        coalesce(stats.month, lake.month) as month,
        coalesce(stats.user_id, lake.user_id) as user_id,
        stats.all_redemptions_count as platform_orders,
        coalesce(lake.lake_orders, 0) as lake_orders,
        stats.egift_orders_count as platform_egift_orders,
        coalesce(lake.lake_complete_orders, 0) as lake_complete_orders,
        stats.egift_face_value as platform_face_value,
        coalesce(lake.lake_face_value, 0) as lake_face_value,
        stats.egift_cost as platform_cost,
        coalesce(lake.lake_cost, 0) as lake_cost,
        stats.egift_savings as platform_savings,
        coalesce(lake.lake_savings, 0) as lake_savings,
        coalesce(lake.currencies, 0) as currencies
    from stats
    full outer join (select * from lake where user_id is not null) as lake
        on stats.organisation_group_id = lake.organisation_group_id
        and stats.month = lake.month
        and stats.user_id = lake.user_id
    union all by name
    select
        organisation_group_id, month, null as user_id, null as platform_orders, lake_orders,
        null as platform_egift_orders,
        lake_complete_orders, null as platform_face_value, lake_face_value, null as platform_cost, lake_cost,
        null as platform_savings, lake_savings, currencies
    from lake
    where user_id is null

),


bounded as (

    -- each figure's range the edges allow: the lake's sure orders (less those that may leave) up to those plus
    -- the orders that may enter; worked out only for a user's row with orders at the edges, or in a month whose
    -- days the lake may lack, that is not matched (a few in a hundred)
    select
        joined.*,
        joined.user_id is not null
        and coalesce(platform_orders, 0) = lake_orders
        and coalesce(platform_egift_orders, 0) = lake_complete_orders
        and coalesce(platform_face_value, 0) = lake_face_value
        and coalesce(platform_cost, 0) = lake_cost
        and coalesce(platform_savings, 0) = lake_savings as is_matched,
        case
            when is_matched or edge_lake.user_id is null then false
            else coalesce(platform_orders, 0) between lake_orders - leaving_orders and lake_orders + entering_orders
                and coalesce(platform_egift_orders, 0)
                between lake_complete_orders - leaving_complete and lake_complete_orders + entering_complete
                and coalesce(platform_face_value, 0)
                between lake_face_value - leaving_face_value and lake_face_value + entering_face_value
                and coalesce(platform_cost, 0) between lake_cost - leaving_cost and lake_cost + entering_cost
                and coalesce(platform_savings, 0)
                between lake_savings - leaving_savings and lake_savings + entering_savings
        end as is_within_edges,
        case
            when is_matched or not coalesce(coverage.lacks_days, false) then false
            else coalesce(platform_orders, 0) >= lake_orders - coalesce(leaving_orders, 0)
                and coalesce(platform_egift_orders, 0) >= lake_complete_orders - coalesce(leaving_complete, 0)
                and coalesce(platform_face_value, 0) >= lake_face_value - coalesce(leaving_face_value, 0)
                and coalesce(platform_cost, 0) >= lake_cost - coalesce(leaving_cost, 0)
                and coalesce(platform_savings, 0) >= lake_savings - coalesce(leaving_savings, 0)
        end as is_within_missing_days
    from joined
    left join edge_lake
        on joined.organisation_group_id = edge_lake.organisation_group_id
        and joined.month = edge_lake.month
        and joined.user_id = edge_lake.user_id
    left join coverage
        on joined.organisation_group_id = coverage.organisation_group_id
        and joined.month = coverage.month

),

final as (

    select
        bounded.organisation_group_id, bounded.month, bounded.user_id,
        platform_orders, lake_orders, platform_egift_orders, lake_complete_orders,
        platform_face_value, lake_face_value, platform_cost, lake_cost, platform_savings, lake_savings,
        coalesce(platform_orders, 0) - lake_orders as orders_difference,
        cast(coalesce(platform_face_value, 0) - lake_face_value as decimal(18, 2)) as face_value_difference,
        cast(coalesce(platform_cost, 0) - lake_cost as decimal(18, 2)) as cost_difference,
        cast(coalesce(platform_savings, 0) - lake_savings as decimal(18, 2)) as savings_difference,
        currencies,
        case
            when is_matched then 'matched'
            when bounded.user_id is null
                or stg_users.user_id is null or stg_users.is_anonymised
                or is_within_edges or is_within_missing_days then 'explained'
            else 'differs'
        end as result,
        case
            when result = 'matched' then null
            when bounded.user_id is null
                then 'unattributed orders: no current user placed them, so no user statistics hold them'
            when stg_users.user_id is null or stg_users.is_anonymised
                then 'user anonymised or no longer current: the lake cannot attribute the user''s orders '
                    || '(they are in the unattributed row)'
            when is_within_edges then 'month edge: the statistics count UTC days, the lake the group''s local days'
            when is_within_missing_days
                then 'days not in the lake: the extract does not hold every local day the statistics'' UTC month '
                    || 'overlaps yet (a partial or provisional month)'
        end as explanation,
        coalesce(stg_groups.is_sandbox, false) as is_test_group
    from bounded
    left join stg_groups
        on bounded.organisation_group_id = stg_groups.organisation_group_id
    left join stg_users
        on bounded.organisation_group_id = stg_users.organisation_group_id
        and bounded.user_id = stg_users.user_id

)

select * from final
