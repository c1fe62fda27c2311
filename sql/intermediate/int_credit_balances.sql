-- Each user's credit as of the build's as-of instant (getvariable('as_of_at'): now on the clock's own day,
-- else the end of the as-of day): the latest read of the user's credit (stg_credit), with the Available items
-- whose expires_at has passed by then counted as expired (their remaining amount moves from available to
-- expired), so an expiry needs no call. Spent is as read (expiry spends nothing).
-- grain: one row per organisation_group_id, user_id
-- key: organisation_group_id, user_id
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   user_id: the Perks user id
--   credit_available: credit available at the as-of instant (read, less what expired since)
--   credit_spent: credit spent, as last read
--   credit_expired: credit expired at the as-of instant (read, plus what expired since)
--   credit_expired_since_read: remaining amount of the items listed Available that expired after the read
--   items_expired_since_read: how many such items
--   balance_read_at: when the balance was last read from the API (the start of the extract run that read it)
--   snapshot_date: the UTC day of that read
-- tests:
--   unique: organisation_group_id, user_id
--   not_null: organisation_group_id, user_id, balance_read_at

with credit as (

    select * from stg_credit

),

expired as (

    select
        *,
        list_filter(
            coalesce(credit_items, []),
            lambda item: item.status = 'Available' and item.expires_at <= getvariable('as_of_at')
        ) as expired_items
    from credit

),

measured as (

    select
        *,
        cast(
            coalesce(list_sum(list_transform(expired_items, lambda item: item.remaining_amount)), 0) as decimal(18, 2)
        ) as credit_expired_since_read
    from expired

),

final as (

    select
        organisation_group_id,
        user_id,
        credit_available - credit_expired_since_read as credit_available,
        credit_spent,
        credit_expired + credit_expired_since_read as credit_expired,
        credit_expired_since_read,
        len(expired_items) as items_expired_since_read,
        extracted_at as balance_read_at,
        snapshot_date
    from measured

)

select * from final
