-- Current users: for each group, the rows of its latest users snapshot (_snapshot_date), the latest
-- extraction of a user within it. A user absent from the latest listing is not current.
-- Personal data: no names, no email (stg_user_emails, ephemeral, reads the current users' emails to
-- attribute orders). Once a user is anonymised the latest snapshot holds null personal fields, and older
-- snapshots are never read for them. Reads only the latest snapshot of each group (`latest:`: the build reads
-- no older snapshot files, latest-snapshots.ts); an empty latest listing (a file with no rows) leaves its
-- group with no current users.
-- grain: one row per organisation_group_id, user_id
-- latest: lake_users
-- key: organisation_group_id, user_id
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   user_id: the Perks user id
--   user_uid: the user's UID on the platform (null once anonymised)
--   alt_uid: the alternative UID the user list carries
--   status: user status as the API reports it (e.g. Active)
--   created_at: when the user was created (UTC)
--   updated_at: when the user was last updated (UTC)
--   deleted_at: when the user was deleted (UTC); null when not
--   last_login: the LAST login (UTC): the API gives no earlier ones
--   login_count: how many times the user logged in
--   is_anonymised: the latest listing holds no email for the user (anonymised: personal fields null)
--   snapshot_date: the UTC day of the snapshot the row comes from
--   extracted_at: when the row was extracted (UTC; the start of the extract run that landed it)
-- tests:
--   unique: organisation_group_id, user_id
--   not_null: organisation_group_id, user_id

with source as (

    select * from lake_users

),

latest_snapshot as (

    select organisation_group_id, max(_snapshot_date) as snapshot_date
    from source
    group by all

),

latest_rows as (

    select source.*
    from source
    semi join latest_snapshot
        on source.organisation_group_id = latest_snapshot.organisation_group_id
        and source._snapshot_date = latest_snapshot.snapshot_date

),

repeated as (

    -- users listed twice in the latest snapshot (rare: a listing is one file): only those are ranked
    select organisation_group_id, id
    from latest_rows
    group by all
    having count(*) > 1

),

current_rows as (

    select * from latest_rows
    anti join repeated using (organisation_group_id, id)
    union all by name
    (
        select latest_rows.* from latest_rows
        semi join repeated using (organisation_group_id, id)
        qualify row_number() over (
            partition by organisation_group_id, id
            order by _extracted_at desc, _run_id desc
        ) = 1
    )

),

renamed as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        id as user_id,
        "UID" as user_uid,
        alt_uid,
        status,
        created_at,
        updated_at,
        deleted_at,
        last_login,
        login_count,
        email is null as is_anonymised,
        cast(_snapshot_date as date) as snapshot_date,
        _extracted_at as extracted_at
    from current_rows

)

select * from renamed
