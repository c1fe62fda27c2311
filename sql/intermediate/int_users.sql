-- Current users with the LOCAL days (in their group's timezone, see int_local_offsets) of their creation
-- and last login, so months of users line up with months of orders (order_date is a local day).
-- grain: one row per organisation_group_id, user_id
-- key: organisation_group_id, user_id
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   user_id: the Perks user id
--   user_uid: the user's UID on the platform (null once anonymised)
--   status: user status as the API reports it
--   is_anonymised: the latest listing holds no email for the user
--   created_at: when the user was created (UTC)
--   last_login: the last login (UTC)
--   login_count: how many times the user logged in
--   created_local_date: the day of created_at in the group's timezone
--   last_login_local_date: the day of last_login in the group's timezone

with users as (

    -- the instants as UTC wall-clock TIMESTAMPs, as int_local_offsets keys its quarter hours
    select
        *,
        make_timestamp(epoch_us(created_at)) as created_utc,
        make_timestamp(epoch_us(last_login)) as last_login_utc
    from stg_users

),

offsets as (

    select organisation_group_id, quarter_start, utc_offset from int_local_offsets

),

final as (

    select
        users.organisation_group_id,
        users.user_id,
        users.user_uid,
        users.status,
        users.is_anonymised,
        users.created_at,
        users.last_login,
        users.login_count,
        cast(users.created_utc + created.utc_offset as date) as created_local_date,
        cast(users.last_login_utc + login.utc_offset as date) as last_login_local_date
    from users
    left join offsets as created
        on users.organisation_group_id = created.organisation_group_id
        and time_bucket(interval 15 minutes, users.created_utc) = created.quarter_start
    left join offsets as login
        on users.organisation_group_id = login.organisation_group_id
        and time_bucket(interval 15 minutes, users.last_login_utc) = login.quarter_start

)

select * from final
