-- Which current user an email belongs to, per group: the join from orders (stg_orders.email_key) to users.
-- Emails match case-insensitively (the key is of lower(trim(email))). If two current users of a group share
-- an email, it belongs to the one not deleted, then the lowest user_id, so an order is never counted twice.
-- An anonymised user has no email, hence no row: her orders match no one and stay unattributed.
-- grain: one row per organisation_group_id, email_key
-- key: organisation_group_id, email_key
-- tests:
--   unique: organisation_group_id, email_key
--   not_null: user_id

with users as (

    select organisation_group_id, email_key, user_id, deleted_at
    from stg_users
    where email_key is not null

),

final as (

    select organisation_group_id, email_key, user_id
    from users
    qualify row_number() over (
        partition by organisation_group_id, email_key
        order by deleted_at is not null, user_id
    ) = 1

)

select * from final
