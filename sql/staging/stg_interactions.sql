-- Interactions, the latest extraction of each record (runs refresh some users at a time).
-- interaction_id is the platform record id (`id` in the API); external_interaction_id is the
-- integrator's own interaction_id. interaction_details (free content, which may hold anything the
-- integrator sent) stays in lake_interactions.
-- grain: one row per organisation_group_id, interaction_id
-- key: organisation_group_id, interaction_id
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   interaction_id: the platform record id (`id` in the API)
--   external_interaction_id: the integrator's own interaction_id, as sent
--   organisation_id: the organisation the record belongs to
--   interaction_type_id: the interaction type (platform id)
--   user_id: the Perks user id the interaction is about
--   interaction_at: when the interaction happened (UTC)
--   created_at: when the platform recorded it (UTC)
--   updated_at: when the platform last updated it (UTC)
--   extracted_at: when the row was extracted (UTC; the start of the extract run that landed it)
-- tests:
--   unique: organisation_group_id, interaction_id
--   not_null: organisation_group_id, interaction_id

with source as (

    select * from lake_interactions

),

renamed as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        id as interaction_id,
        interaction_id as external_interaction_id,
        organisation_id,
        interaction_type_id,
        user_id,
        interaction_at,
        created_at,
        updated_at,
        _extracted_at as extracted_at
    from source
    qualify row_number() over (
        partition by organisation_group_id, id
        order by _extracted_at desc, _run_id desc
    ) = 1

)

select * from renamed
