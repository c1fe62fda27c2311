-- Engagement per group and local month, every month from the group's first activity to the as-of month.
--   users            current users created by the end of the month (creation day in the group's timezone)
--   new_users        current users created in the month
--   active_users     distinct users with an order, an interaction or their last login in the month
--                    (the API gives only the LAST login, so earlier logins cannot count)
--   redeeming_users  distinct users with redemptions in the month (redemption statistics window)
--   orders           every order of the month, unattributed ones included
--   order_saving     summed only when the month's orders share one currency (savings_currency); null
--                    when they span several (savings_monthly and revenue_monthly keep them apart)
--   egift_savings    from redemption statistics, which carry no currency
--   recognised_*     the orders whose status is recognised revenue (PERKS_REVENUE_STATUSES, as revenue_monthly's
--                    is_recognised; from savings_monthly); orders and order_saving keep every status, as before
--                    (active_users too: placing an order is activity, whatever its status becomes)
-- grain: one row per organisation_group_id, month
-- key: organisation_group_id, month
-- columns:
--   organisation_group_id: the group
--   month: first day of the group's local month
--   users: current users created by the end of the month
--   new_users: current users created in the month
--   active_users: users with an order, an interaction or their last login in the month
--   redeeming_users: users with redemptions in the month's redemption statistics
--   orders: every order of the month, unattributed ones included
--   savings_currency: the currency of the month's orders when there is one; null when several
--   order_saving: order_saving of the month (null when currencies are mixed)
--   egift_savings: egift_savings of the month's redemption statistics
--   recognised_orders: of orders, those whose status is recognised revenue (as revenue_monthly's is_recognised)
--   recognised_order_saving: order_saving of the recognised orders (null when the month's currencies are mixed)
--   month_state: the group's month: partial (the extract starts after its first day), provisional (not yet past
--     the lookback), final (past the lookback: the extract will not change it) or signed_off (`perks close`); the
--     word the report and `perks status` use (src/closes/month-state.ts)
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   unique: organisation_group_id, month
--   not_null: organisation_group_id, month, users, orders, recognised_orders, month_state, is_test_group

with user_months as (

    select organisation_group_id, user_id, cast(date_trunc('month', created_local_date) as date) as created_month,
        cast(date_trunc('month', last_login_local_date) as date) as last_login_month
    from int_users

),

interaction_months as (

    -- interaction_at as a UTC wall-clock TIMESTAMP, as int_local_offsets keys its quarter hours
    select
        interactions.organisation_group_id,
        interactions.user_id,
        cast(date_trunc('month', interactions.interaction_utc + offsets.utc_offset) as date) as month
    from (
        select organisation_group_id, user_id, make_timestamp(epoch_us(interaction_at)) as interaction_utc
        from stg_interactions
        where user_id is not null
    ) as interactions
    inner join int_local_offsets as offsets
        on interactions.organisation_group_id = offsets.organisation_group_id
        and time_bucket(interval 15 minutes, interactions.interaction_utc) = offsets.quarter_start

),

money as (

    select
        organisation_group_id,
        month,
        cast(sum(orders) as bigint) as orders,
        -- a user's redemption statistics sit on one row of the user's month (savings_monthly), so counting the rows
        -- counts the users, without count(distinct)'s hash table over the whole mart
        count(user_id) filter (where redemptions > 0) as redeeming_users,
        min(order_currency) filter (where orders > 0) as currency_min,
        max(order_currency) filter (where orders > 0) as currency_max,
        count(*) filter (where orders > 0 and order_currency is null) as no_currency,
        sum(order_saving) as order_saving_sum,
        cast(sum(recognised_orders) as bigint) as recognised_orders,
        sum(recognised_order_saving) as recognised_order_saving_sum,
        sum(egift_savings) as egift_savings
    from savings_monthly
    group by all

),

bounds as (

    select organisation_group_id, min(month) as first_month, max(month) as last_month
    from (
        select organisation_group_id, month from money
        union all
        select organisation_group_id, created_month from user_months where created_month is not null
    )
    group by all

),

months as (

    select
        organisation_group_id,
        cast(unnest(generate_series(
            first_month,
            greatest(last_month, cast(date_trunc('month', getvariable('as_of')) as date)),
            interval 1 month
        )) as date) as month
    from bounds

),

created as (

    select organisation_group_id, created_month as month, count(*) as new_users
    from user_months
    where created_month is not null
    group by all

),

ordering_users as (

    -- users with an order in the month: savings_monthly holds one row per user and currency
    select organisation_group_id, month, user_id, order_currency
    from savings_monthly
    where user_id is not null and orders > 0

),

ordering_months as (

    select
        organisation_group_id,
        month,
        count(*) as user_rows,
        -- one currency (or none) on every row of the month: one row per user, so the rows count the users
        (min(order_currency) = max(order_currency) and count(order_currency) = count(*)) or count(order_currency) = 0
            as one_currency
    from ordering_users
    group by all

),

ordering_active as (

    -- distinct users without a hash table over the whole mart: the rows where the month has one currency, the
    -- distinct users only in a month of several (a user may have a row in each)
    select organisation_group_id, month, user_rows as active_users from ordering_months where one_currency
    union all
    select organisation_group_id, month, count(distinct user_id)
    from ordering_users
    semi join (select organisation_group_id, month from ordering_months where not one_currency)
        using (organisation_group_id, month)
    group by all

),

other_users as (

    -- users with their last login or an interaction in the month, once each (a few rows a user, not the orders)
    select organisation_group_id, last_login_month as month, user_id from user_months where last_login_month is not null
    union
    select organisation_group_id, month, user_id from interaction_months

),

other_active as (

    -- of those, the users who had no order that month: all of them, less those who had one (a semi join, which
    -- DuckDB builds on these few rows, not on the orders; each user counted once)
    select organisation_group_id, month, count(*) as active_users from other_users group by all
    union all
    select organisation_group_id, month, -count(*)
    from other_users
    semi join ordering_users using (organisation_group_id, month, user_id)
    group by all

),

activity as (

    -- distinct users with an order, a last login or an interaction in the month
    select organisation_group_id, month, cast(sum(active_users) as bigint) as active_users
    from (select * from ordering_active union all select * from other_active)
    group by all

),

final as (

    select
        months.organisation_group_id,
        months.month,
        cast(sum(coalesce(created.new_users, 0)) over (
            partition by months.organisation_group_id order by months.month rows unbounded preceding
        ) as bigint) as users,
        coalesce(created.new_users, 0) as new_users,
        coalesce(activity.active_users, 0) as active_users,
        coalesce(money.redeeming_users, 0) as redeeming_users,
        coalesce(money.orders, 0) as orders,
        case when money.currency_min is not distinct from money.currency_max and coalesce(money.no_currency, 0) = 0
            then money.currency_min end as savings_currency,
        case when money.currency_min is not distinct from money.currency_max and coalesce(money.no_currency, 0) = 0
            then cast(coalesce(money.order_saving_sum, 0) as decimal(18, 2)) end as order_saving,
        cast(coalesce(money.egift_savings, 0) as decimal(18, 2)) as egift_savings,
        coalesce(money.recognised_orders, 0) as recognised_orders,
        case when money.currency_min is not distinct from money.currency_max and coalesce(money.no_currency, 0) = 0
            then cast(coalesce(money.recognised_order_saving_sum, 0) as decimal(18, 2)) end as recognised_order_saving,
        coalesce(states.month_state, 'provisional'::month_state) as month_state,
        coalesce(groups.is_sandbox, false) as is_test_group
    from months
    left join created on months.organisation_group_id = created.organisation_group_id and months.month = created.month
    left join activity
        on months.organisation_group_id = activity.organisation_group_id and months.month = activity.month
    left join money on months.organisation_group_id = money.organisation_group_id and months.month = money.month
    left join stg_month_states as states
        on months.organisation_group_id = states.organisation_group_id and months.month = states.month
    left join stg_groups as groups on months.organisation_group_id = groups.organisation_group_id

)

select * from final
