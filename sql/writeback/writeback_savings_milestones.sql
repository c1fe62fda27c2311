-- Savings milestones to tell the platform: a user's cumulative savings in the group's currency
-- (recognised_order_saving + egift_savings summed over the user's months so far) first reached 50, 100, 250 or 500.
-- Only the orders that count (issue 43): recognised_order_saving, the savings of orders whose status is recognised
-- revenue (PERKS_REVENUE_STATUSES, default Complete), as finance counts them: a cancelled or refunded order saved
-- the member nothing. Redemption statistics carry no status: egift_savings count whole.
-- The group's currency is the order_currency most of its savings_monthly rows carry; rows in another
-- currency are left out (never summed together), rows without one (egift savings only) count in.
-- interaction_at is the first instant (UTC) of the month of the crossing: the mart is monthly, no finer time
-- is known. A milestone happens once per user and threshold: savings lowered later (refunds) do not take a
-- sent milestone back, and crossing again after dropping below is the same milestone (same id, sent once).
-- interaction_id: first 52 bits of md5('perks-writeback-v1:<group>:<user>:savings_milestone:<threshold>').
-- Built by users (src/transform/incremental/by-user.ts): a build computes again only the users whose savings_monthly
-- rows changed since the last build, and every user of a group whose currency (group_currency) changed.
-- grain: one row per organisation_group_id, user_id, threshold reached
-- key: interaction_id
-- materialized: table
-- incremental: user on organisation_group_id, user_id = identifier_value
-- group-wide: group_currency
-- columns:
--   organisation_group_id: the group the user belongs to (Perks organisation_group_id)
--   identifier: how the user is named to the API (always id here)
--   identifier_value: the user's id, as text
--   kind: what happened (savings_milestone); PERKS_WRITEBACK_TYPES maps it to an interaction type
--   interaction_type: the type sent, by default the kind itself
--   interaction_at: when it happened (UTC): the first instant of the month of the crossing
--   interaction_details: JSON sent with the interaction: threshold, cumulative_saving, currency, month
--   interaction_id: the interaction's id, stable until it is sent (see above)
-- tests:
--   unique: interaction_id
--   not_null: interaction_id, organisation_group_id, identifier_value, interaction_type, interaction_at
--   accepted_values: identifier in id
with thresholds as (
    select unnest([50, 100, 250, 500]) as threshold
),

savings_rows as (
    select
        organisation_group_id::bigint as organisation_group_id,
        user_id::bigint as user_id,
        month::date as month,
        order_currency::varchar as order_currency,
        coalesce(recognised_order_saving, 0) + coalesce(egift_savings, 0) as saving
    from savings_monthly
    where user_id is not null
),

candidates as (
    -- a running total never exceeds the sum of the positive rows: only users whose positive rows reach
    -- the lowest threshold can cross one, and only their months are summed and ranked. Summed over every
    -- currency (a superset of the users whose rows in the group's currency reach it): one pass over the mart,
    -- before the currency's join, which then reads the candidates' rows only
    select organisation_group_id, user_id
    from savings_rows
    group by organisation_group_id, user_id
    having sum(greatest(saving, 0)) >= (select min(threshold) from thresholds)
),

group_currency as (
    select organisation_group_id, order_currency as currency
    from savings_rows
    where order_currency is not null
    group by organisation_group_id, order_currency
    qualify row_number() over (partition by organisation_group_id order by count(*) desc, order_currency) = 1
),

in_group_currency as (
    select s.organisation_group_id, s.user_id, s.month, g.currency, s.saving
    from savings_rows as s
    semi join candidates using (organisation_group_id, user_id)
    left join group_currency as g on g.organisation_group_id = s.organisation_group_id
    where s.order_currency is null or s.order_currency = g.currency
),

monthly as (
    select organisation_group_id, user_id, month, currency, sum(saving) as saving
    from in_group_currency
    group by organisation_group_id, user_id, month, currency
),

cumulative as (
    select
        *,
        sum(saving) over (
            partition by organisation_group_id, user_id order by month rows unbounded preceding
        ) as cumulative_saving
    from monthly
),

crossed as (
    select c.*, t.threshold
    from cumulative as c
    join thresholds as t
        on c.cumulative_saving >= t.threshold
        and c.cumulative_saving - c.saving < t.threshold
    qualify row_number() over (
        partition by c.organisation_group_id, c.user_id, t.threshold order by c.month
    ) = 1
),

final as (
    select
        organisation_group_id,
        'id' as identifier,
        user_id::varchar as identifier_value,
        'savings_milestone' as kind,
        -- default type; PERKS_WRITEBACK_TYPES maps the kind to another configured type
        'savings_milestone' as interaction_type,
        timezone('UTC', month::timestamp) as interaction_at,
        json_object(
            'threshold', threshold,
            'cumulative_saving', cumulative_saving,
            'currency', currency,
            'month', strftime(month, '%Y-%m')
        ) as interaction_details,
        ('0x' || left(md5(concat_ws(':',
            'perks-writeback-v1', organisation_group_id, user_id, 'savings_milestone', threshold
        )), 13))::bigint as interaction_id
    from crossed
)

select * from final
