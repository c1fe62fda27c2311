-- Groups of the organisation as last seen: the latest snapshot of each group.
-- timezone is the group's IANA zone: local days and months of timestamps are taken in it.
-- grain: one row per organisation_group_id
-- key: organisation_group_id
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   group_name: the group's slug: the API's `name` (e.g. group-11), an identifier, not a display name
--     (dim_groups.group_slug)
--   display_name: the group's display name, what people read
--   is_sandbox: true for a sandbox (test) group
--   locale: the group's locale, xx_XX
--   timezone: the group's IANA zone: local days and months are taken in it
--   custom_domain: the group's custom domain; null when none
--   subdomain: the group's subdomain on the platform
--   snapshot_date: the UTC day of the snapshot the row comes from
--   extracted_at: when the row was extracted (UTC; the start of the extract run that landed it)
-- tests:
--   unique: organisation_group_id
--   not_null: organisation_group_id

with source as (

    select * from lake_groups

),

renamed as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        name as group_name,
        display_name,
        sandbox as is_sandbox,
        locale,
        timezone,
        custom_domain,
        subdomain,
        cast(_snapshot_date as date) as snapshot_date,
        _extracted_at as extracted_at
    from source
    qualify row_number() over (
        partition by organisation_group_id
        order by _snapshot_date desc, _extracted_at desc, _run_id desc
    ) = 1

)

select * from renamed
