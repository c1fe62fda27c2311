-- Which current user an email belongs to, per group: how orders (which name no user, only an email) are
-- attributed to users in stg_orders. Emails match case-insensitively and ignoring surrounding blanks.
-- If two current users of a group share an email, it belongs to the one not deleted, then the lowest
-- user_id, so an order is never counted twice. An anonymised user has no email, hence no row: her orders
-- match no one and stay unattributed.
-- Ephemeral: it holds emails, so it lives only during the build (a temporary table) and is never stored.
-- grain: one row per organisation_group_id, email
-- latest: lake_users
-- key: organisation_group_id, email
-- materialized: ephemeral
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   email: the current user's email, lower-cased and trimmed (never stored: ephemeral)
--   user_id: the current user it belongs to
-- tests:
--   unique: organisation_group_id, email
--   not_null: user_id

with current_emails as (

    -- the email of each current user: its row in the snapshot and extraction stg_users kept
    select
        users.organisation_group_id,
        lower(trim(source.email)) as email,
        users.user_id,
        users.deleted_at
    from stg_users as users
    inner join lake_users as source
        on users.organisation_group_id = cast(source.organisation_group_id as bigint)
        and users.user_id = source.id
        and users.snapshot_date = cast(source._snapshot_date as date)
        and users.extracted_at = source._extracted_at
    where nullif(trim(source.email), '') is not null

),

final as (

    select organisation_group_id, email, user_id
    from current_emails
    qualify row_number() over (
        partition by organisation_group_id, email
        order by deleted_at is not null, user_id
    ) = 1

)

select * from final
