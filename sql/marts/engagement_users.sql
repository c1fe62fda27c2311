-- Engagement of each current user as of the build's as-of day (getvariable('as_of'), default today):
-- logins, orders and savings in the last 30 and 90 days, redemptions, credit, interactions, and a segment.
-- Days are local to the group (int_users); "last 30 days" is order_date in (as_of - 30, as_of].
-- Savings are order_saving; they are summed only when the user's orders in the window share one
-- currency (savings_currency), and are null when they span several (savings_monthly has them apart).
-- savings_* count every status, as they always did; recognised_savings_* beside them count the orders whose status
-- is recognised revenue (issue 43: one rule of what counts, as savings_monthly's recognised_* columns).
-- The windows read only the orders of the last 90 days (recent_orders): stg_orders is stored in month
-- order, so the other months' row groups are skipped (at 10 M orders 2.1 -> 1.5 CPU-s for the orders' part).
-- Segment, first that applies, with thresholds from variables segment_new_days (30),
-- segment_active_days (30) and segment_dormant_days (90):
--   new           created fewer than segment_new_days days before as_of;
--   never_active  never logged in (no last_login, login_count 0 or null) and no orders;
--   active        last activity (last login or last order) at most segment_active_days days ago;
--   dormant       last activity at most segment_dormant_days days ago;
--   churned       last activity longer ago (or unknown).
-- grain: one row per organisation_group_id, user_id
-- key: organisation_group_id, user_id
-- columns:
--   organisation_group_id: the group
--   user_id: the Perks user id
--   user_uid: the user's UID on the platform
--   status: the user's status as the API reports it
--   is_anonymised: the latest users snapshot holds no email for the user
--   created_at: when the user was created (UTC)
--   last_login: the user's last login (UTC; the API gives only the last one)
--   login_count: logins as the API counts them
--   days_since_last_login: local days from the last login to the as-of day
--   last_order_date: local day of the user's last order
--   orders_total: the user's orders, all time (every status)
--   orders_30d: orders in the 30 local days up to the as-of day
--   orders_90d: orders in the 90 local days up to the as-of day
--   savings_currency: currency of the 90-day savings; null when they span several
--   savings_30d: order_saving in the last 30 days (null when currencies are mixed)
--   savings_90d: order_saving in the last 90 days (null when currencies are mixed)
--   recognised_savings_30d: savings_30d of the orders whose status is recognised revenue (PERKS_REVENUE_STATUSES,
--     as revenue_monthly's is_recognised; null when currencies are mixed)
--   recognised_savings_90d: savings_90d of the recognised orders (null when currencies are mixed)
--   redemptions: all_redemptions_count over every redemption statistics window landed
--   egift_orders: egift_orders_count over every window landed
--   egift_savings: egift_savings over every window landed
--   credit_available: credit available at the as-of instant: the latest read of the user's credit, less the
--     Available items whose expires_at has passed since (int_credit_balances)
--   credit_spent: credit spent, as the credit operation last reported it
--   credit_expired: credit expired at the as-of instant (as last read, plus the items expired since)
--   balance_read_at: when the user's credit was last read from the API (UTC; null when never read)
--   interactions: interactions landed for the user
--   last_interaction_at: the latest interaction_at (UTC)
--   segment: new, active, dormant, churned or never_active (thresholds above)
--   is_test_group: the group is a test group (stg_groups.is_sandbox): the finance report leaves it out of its totals
-- tests:
--   unique: organisation_group_id, user_id
--   not_null: organisation_group_id, user_id, segment
--   accepted_values: segment in new, active, dormant, churned, never_active
--   relationships: organisation_group_id, user_id -> stg_users

with users as (

    select * from int_users

),

user_orders as (

    select organisation_group_id, user_id, count(*) as orders_total, max(order_date) as last_order_date
    from stg_orders
    where user_id is not null
    group by all

),

signed_rules as (

    -- the signed-off months' own rules (usually none differ): a small side to join, most orders use the build's
    select organisation_group_id, month, revenue_statuses from stg_month_states where revenue_statuses is not null

),

recent_rated as (

    -- the last 90 days' orders of current users; recognised: the status counts as revenue (revenue_monthly's
    -- is_recognised, by the rule of the order's month)
    select
        orders.organisation_group_id,
        orders.user_id,
        orders.order_date,
        orders.order_saving,
        orders.order_currency,
        coalesce(list_contains(
            coalesce(signed.revenue_statuses, getvariable('revenue_statuses')), orders.order_status
        ), false) as is_recognised
    from stg_orders as orders
    left join signed_rules as signed
        on orders.organisation_group_id = signed.organisation_group_id
        and cast(date_trunc('month', orders.order_date) as date) = signed.month
    where orders.user_id is not null
        and orders.order_date > getvariable('as_of') - 90
        and orders.order_date <= getvariable('as_of')

),

recent_orders as (

    select
        organisation_group_id,
        user_id,
        count(*) filter (where order_date > getvariable('as_of') - 30) as orders_30d,
        count(*) as orders_90d,
        sum(order_saving) filter (where order_date > getvariable('as_of') - 30) as savings_30d_sum,
        sum(order_saving) as savings_90d_sum,
        sum(order_saving) filter (
            where order_date > getvariable('as_of') - 30 and is_recognised
        ) as recognised_savings_30d_sum,
        sum(order_saving) filter (where is_recognised) as recognised_savings_90d_sum,
        min(order_currency) as currency_min,
        max(order_currency) as currency_max,
        count(*) filter (where order_currency is null) as no_currency
    from recent_rated
    group by organisation_group_id, user_id

),

redemptions as (

    select
        organisation_group_id,
        user_id,
        cast(sum(all_redemptions_count) as bigint) as redemptions,
        cast(sum(egift_orders_count) as bigint) as egift_orders,
        cast(sum(egift_savings) as decimal(18, 2)) as egift_savings
    from stg_redemption_stats
    group by all

),

credit as (

    select organisation_group_id, user_id, credit_available, credit_spent, credit_expired, balance_read_at
    from int_credit_balances

),

interactions as (

    select organisation_group_id, user_id, count(*) as interactions, max(interaction_at) as last_interaction_at
    from stg_interactions
    where user_id is not null
    group by all

),

joined as (

    select
        users.organisation_group_id,
        users.user_id,
        users.user_uid,
        users.status,
        users.is_anonymised,
        users.created_at,
        users.last_login,
        users.login_count,
        date_diff('day', users.created_local_date, getvariable('as_of')) as days_since_created,
        date_diff('day', users.last_login_local_date, getvariable('as_of')) as days_since_last_login,
        date_diff(
            'day', greatest(users.last_login_local_date, orders.last_order_date), getvariable('as_of')
        ) as days_since_last_activity,
        orders.last_order_date,
        coalesce(orders.orders_total, 0) as orders_total,
        coalesce(recent.orders_30d, 0) as orders_30d,
        coalesce(recent.orders_90d, 0) as orders_90d,
        recent.currency_min is not distinct from recent.currency_max
            and coalesce(recent.no_currency, 0) = 0 as is_single_currency,
        recent.currency_min as currency,
        recent.savings_30d_sum,
        recent.savings_90d_sum,
        recent.recognised_savings_30d_sum,
        recent.recognised_savings_90d_sum,
        coalesce(redemptions.redemptions, 0) as redemptions,
        coalesce(redemptions.egift_orders, 0) as egift_orders,
        coalesce(redemptions.egift_savings, 0) as egift_savings,
        credit.credit_available,
        credit.credit_spent,
        credit.credit_expired,
        credit.balance_read_at,
        coalesce(interactions.interactions, 0) as interactions,
        interactions.last_interaction_at
    from users
    left join user_orders as orders
        on users.organisation_group_id = orders.organisation_group_id and users.user_id = orders.user_id
    left join recent_orders as recent
        on users.organisation_group_id = recent.organisation_group_id and users.user_id = recent.user_id
    left join redemptions
        on users.organisation_group_id = redemptions.organisation_group_id and users.user_id = redemptions.user_id
    left join credit
        on users.organisation_group_id = credit.organisation_group_id and users.user_id = credit.user_id
    left join interactions
        on users.organisation_group_id = interactions.organisation_group_id and users.user_id = interactions.user_id

),

final as (

    select
        organisation_group_id,
        user_id,
        user_uid,
        status,
        is_anonymised,
        created_at,
        last_login,
        login_count,
        days_since_last_login,
        last_order_date,
        orders_total,
        orders_30d,
        orders_90d,
        case when is_single_currency then currency end as savings_currency,
        case when is_single_currency then cast(coalesce(savings_30d_sum, 0) as decimal(18, 2)) end as savings_30d,
        case when is_single_currency then cast(coalesce(savings_90d_sum, 0) as decimal(18, 2)) end as savings_90d,
        case
            when is_single_currency then cast(coalesce(recognised_savings_30d_sum, 0) as decimal(18, 2))
        end as recognised_savings_30d,
        case
            when is_single_currency then cast(coalesce(recognised_savings_90d_sum, 0) as decimal(18, 2))
        end as recognised_savings_90d,
        redemptions,
        egift_orders,
        egift_savings,
        credit_available,
        credit_spent,
        credit_expired,
        balance_read_at,
        interactions,
        last_interaction_at,
        case
            when days_since_created < getvariable('segment_new_days') then 'new'
            when last_login is null and coalesce(login_count, 0) = 0 and orders_total = 0 then 'never_active'
            when days_since_last_activity <= getvariable('segment_active_days') then 'active'
            when days_since_last_activity <= getvariable('segment_dormant_days') then 'dormant'
            else 'churned'
        end as segment,
        coalesce(groups.is_sandbox, false) as is_test_group
    from joined
    left join (select organisation_group_id as group_id, is_sandbox from stg_groups) as groups
        on joined.organisation_group_id = groups.group_id

)

select * from final
