-- Current credit of each user: runs refresh some users at a time, so the latest extraction of each
-- user is current, whatever snapshot day it sits in.
-- grain: one row per organisation_group_id, user_id
-- key: organisation_group_id, user_id
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   user_id: the Perks user id
--   credit_available: credit the user can still spend, as read (available)
--   credit_spent: credit spent on orders, as read (spent)
--   credit_expired: credit expired unused, as read (expired)
--   credit_items: the credit items as read (status, amount, remaining_amount, expires_at, created_at)
--   snapshot_date: the UTC day of the read (its run's start)
--   extracted_at: when the row was extracted (UTC; the start of the extract run that landed it)
-- tests:
--   unique: organisation_group_id, user_id
--   not_null: organisation_group_id, user_id

with source as (

    select * from lake_credit

),

renamed as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        user_id,
        available as credit_available,
        spent as credit_spent,
        expired as credit_expired,
        credits as credit_items,
        cast(_snapshot_date as date) as snapshot_date,
        _extracted_at as extracted_at
    from source
    qualify row_number() over (
        partition by organisation_group_id, user_id
        order by _extracted_at desc, _run_id desc
    ) = 1

)

select * from renamed
