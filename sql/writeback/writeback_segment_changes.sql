-- Segment changes to tell the platform: a user's current segment (engagement_users) differs from the last
-- segment the write-back sent for that user (lake_writeback_ledger, status sent). A user the platform was
-- never told about gets one row (previous_segment null): the first write-back sends every user's segment.
-- Anonymised users get nothing.
-- The previous segment is what was SENT, not the previous build's: two builds between write-backs lose no
-- change, and a change that reverted before it was sent sends nothing. A rejected change is not retried.
-- interaction_id: first 52 bits of md5('perks-writeback-v1:<group>:<user>:segment_change:<n>:<segment>'),
-- n = 1 + the changes already sent to that user; the same change keeps its id until sent, the next gets n + 1.
-- grain: one row per organisation_group_id, user_id whose segment changed since the last one sent
-- key: interaction_id
-- materialized: table
-- columns:
--   organisation_group_id: the group the user belongs to (Perks organisation_group_id)
--   identifier: how the user is named to the API (always id here)
--   identifier_value: the user's id, as text
--   kind: what happened (segment_change); PERKS_WRITEBACK_TYPES maps it to an interaction type
--   interaction_type: the type sent, by default the kind itself
--   interaction_at: when it happened (UTC): the second the write-back evaluated it
--   interaction_details: JSON sent with the interaction: segment, previous_segment, change_number
--   interaction_id: the interaction's id, stable until it is sent (see above)
-- tests:
--   unique: interaction_id
--   not_null: interaction_id, organisation_group_id, identifier_value, interaction_type, interaction_at
--   accepted_values: identifier in id
with current_segments as (
    select
        organisation_group_id::bigint as organisation_group_id,
        user_id::bigint as user_id,
        segment::varchar as segment
    from engagement_users
    -- an anonymised user is told nothing more
    where segment is not null and not coalesce(is_anonymised, false)
),

sent_changes as (
    select
        organisation_group_id,
        identifier_value,
        interaction_id,
        -- read through to_json: the ledger view may not have interaction_details yet (no ledger files)
        to_json(ledger) ->> '$.interaction_details.segment' as segment,
        attempted_at
    from lake_writeback_ledger as ledger
    where kind = 'segment_change' and identifier = 'id' and status = 'sent'
),

last_sent as (
    select
        organisation_group_id,
        identifier_value,
        arg_max(segment, attempted_at) as segment,
        count(distinct interaction_id) as changes_sent
    from sent_changes
    group by organisation_group_id, identifier_value
),

changed as (
    select
        c.organisation_group_id,
        c.user_id,
        c.segment,
        l.segment as previous_segment,
        coalesce(l.changes_sent, 0) + 1 as change_number
    from current_segments as c
    left join last_sent as l
        on l.organisation_group_id = c.organisation_group_id
        and l.identifier_value = c.user_id::varchar
    where l.segment is distinct from c.segment
),

final as (
    select
        organisation_group_id,
        'id' as identifier,
        user_id::varchar as identifier_value,
        'segment_change' as kind,
        -- default type; PERKS_WRITEBACK_TYPES maps the kind to another configured type
        'segment_change' as interaction_type,
        -- the program's clock (PERKS_NOW pins it), set by the write-back as a variable
        date_trunc('second', getvariable('evaluated_at')::timestamptz) as interaction_at,
        json_object(
            'segment', segment,
            'previous_segment', previous_segment,
            'change_number', change_number
        ) as interaction_details,
        ('0x' || left(md5(concat_ws(':',
            'perks-writeback-v1', organisation_group_id, user_id, 'segment_change', change_number, segment
        )), 13))::bigint as interaction_id
    from changed
)

select * from final
