-- Redemption statistics per user and monthly window: the latest extraction of each window wins.
-- window_start is the first day of the month the statistics cover; window_end is exclusive.
-- Personal data: the email and UID columns of the stream are not carried (the current UID is in
-- stg_users), so an anonymised user's old windows hold only ids and numbers.
-- grain: one row per organisation_group_id, window_start, user_id
-- key: organisation_group_id, window_start, user_id
-- intervals: month on organisation_group_id, window_start
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   window_start: first day of the month the statistics cover
--   window_end: first day after the window (exclusive)
--   user_id: the Perks user id
--   all_redemptions_count: redemptions of every kind in the window
--   egift_orders_count: egift orders in the window
--   egift_face_value: face value of the egifts
--   egift_cost: what the egifts cost
--   egift_savings: what the user saved on egifts (no currency given by the API)
--   extracted_at: when the row was extracted (UTC; the start of the extract run that landed it)
-- tests:
--   unique: organisation_group_id, window_start, user_id
--   not_null: organisation_group_id, window_start, user_id

with source as (

    select * from lake_redemption_stats

),

renamed as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        cast(window_start as date) as window_start,
        cast(window_end as date) as window_end,
        id as user_id,
        all_redemptions_count,
        egift_orders_count,
        egift_face_value,
        egift_cost,
        egift_savings,
        _extracted_at as extracted_at
    from source
    qualify row_number() over (
        partition by organisation_group_id, window_start, id
        order by _extracted_at desc, _run_id desc
    ) = 1

)

select * from renamed
