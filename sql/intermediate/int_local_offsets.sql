-- The UTC offset of each group's timezone in every quarter hour (UTC) in which one of its users was created,
-- last logged in or interacted, to turn those timestamps into the group's LOCAL days and months.
-- Why a table: timezone() with a zone that differs from row to row costs microseconds a row (seconds for a
-- million users); a zone's offset cannot change inside a quarter hour (transitions fall on quarter hours),
-- so it is computed once per group and quarter hour instead. A group with no known timezone is read as UTC.
-- quarter_start is the quarter hour as a UTC wall-clock TIMESTAMP: make_timestamp(epoch_us(ts)) is
-- timezone('UTC', ts) without ICU's time zone machinery (0.04 against 0.36 CPU-s a million rows), and
-- time_bucket on a TIMESTAMP costs about a third of time_bucket on a TIMESTAMPTZ.
-- Local time of a timestamp ts: make_timestamp(epoch_us(ts)) + utc_offset, joined on
-- time_bucket(interval 15 minutes, make_timestamp(epoch_us(ts))) = quarter_start.
-- grain: one row per organisation_group_id, quarter_start
-- key: organisation_group_id, quarter_start
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   quarter_start: the quarter hour, a UTC wall-clock TIMESTAMP
--   timezone: the group's IANA zone (UTC when unknown)
--   utc_offset: the zone's offset from UTC in that quarter hour (local = UTC + utc_offset)
-- tests:
--   unique: organisation_group_id, quarter_start

with stamps as (

    select
        organisation_group_id,
        time_bucket(interval 15 minutes, make_timestamp(epoch_us(created_at))) as quarter_start
    from stg_users
    where created_at is not null
    union
    select organisation_group_id, time_bucket(interval 15 minutes, make_timestamp(epoch_us(last_login)))
    from stg_users
    where last_login is not null
    union
    select organisation_group_id, time_bucket(interval 15 minutes, make_timestamp(epoch_us(interaction_at)))
    from stg_interactions
    where interaction_at is not null

),

zones as (

    select stamps.organisation_group_id, stamps.quarter_start, coalesce(stg_groups.timezone, 'UTC') as timezone
    from stamps
    left join stg_groups
        on stamps.organisation_group_id = stg_groups.organisation_group_id

),

final as (

    select
        organisation_group_id,
        quarter_start,
        timezone,
        timezone(timezone, timezone('UTC', quarter_start)) - quarter_start as utc_offset
    from zones

)

select * from final
