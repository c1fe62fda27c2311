-- Current users with the LOCAL days (in their group's timezone, see int_local_offsets) of their creation
-- and last login, so months of users line up with months of orders (order_date is a local day).
-- grain: one row per organisation_group_id, user_id
-- key: organisation_group_id, user_id

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
