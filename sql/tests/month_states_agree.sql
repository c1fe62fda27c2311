-- model: revenue_monthly
-- One vocabulary (issue 43): every monthly mart says the same month_state for a group's month as stg_month_states
-- (the rule of src/closes/month-state.ts; a month without a row: provisional), and signed_off exactly where
-- revenue_monthly's is_closed says the month is signed off. Returns the marts' rows that disagree.

with said as (

    select 'revenue_monthly' as mart, organisation_group_id, month, month_state, is_closed from revenue_monthly
    union all
    select 'revenue_offers_monthly', organisation_group_id, month, month_state, null from revenue_offers_monthly
    union all
    -- a row per user and month: its group-months first (a few hundred), then the join
    select distinct 'savings_monthly', organisation_group_id, month, month_state, null from savings_monthly
    union all
    select 'engagement_monthly', organisation_group_id, month, month_state, null from engagement_monthly
    union all
    select 'credit_liability_monthly', organisation_group_id, month, month_state, is_closed
    from credit_liability_monthly

)

select distinct said.mart, said.organisation_group_id, said.month, said.month_state, states.month_state as expected
from said
left join stg_month_states as states
    on said.organisation_group_id = states.organisation_group_id
    and said.month = states.month
where said.month_state is distinct from coalesce(states.month_state, 'provisional'::month_state)
    or (said.is_closed is not null and said.is_closed is distinct from (said.month_state = 'signed_off'))
