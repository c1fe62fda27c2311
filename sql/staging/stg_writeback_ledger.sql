-- The write-back ledger's current state: the latest row of each interaction_id.
-- identifier_value (which may be an email) stays in lake_writeback_ledger.
-- grain: one row per interaction_id
-- key: interaction_id
-- columns:
--   interaction_id: the interaction's id (writeback models' interaction_id)
--   organisation_group_id: the group (Perks organisation_group_id)
--   kind: what happened (e.g. savings_milestone)
--   identifier: how the user is named to the API (e.g. id)
--   interaction_type: the interaction type sent
--   interaction_at: when it happened (UTC)
--   status: pending, sent or rejected
--   http_status: HTTP status of the last attempt; null before any
--   message: what the API answered, when it refused
--   attempted_at: when it was last attempted (UTC)
--   extracted_at: when the ledger row was written (UTC)
-- tests:
--   unique: interaction_id
--   not_null: interaction_id
--   accepted_values: status in pending, sent, rejected

with source as (

    select * from lake_writeback_ledger

),

renamed as (

    select
        interaction_id,
        cast(organisation_group_id as bigint) as organisation_group_id,
        kind,
        identifier,
        interaction_type,
        interaction_at,
        status,
        http_status,
        message,
        attempted_at,
        _extracted_at as extracted_at
    from source
    qualify row_number() over (
        partition by interaction_id
        order by _extracted_at desc, attempted_at desc nulls last, _run_id desc
    ) = 1

)

select * from renamed
