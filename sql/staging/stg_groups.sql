-- Groups of the organisation as last seen: the latest snapshot of each group.
-- timezone is the group's IANA zone: local days and months of timestamps are taken in it.
-- grain: one row per organisation_group_id
-- key: organisation_group_id
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
