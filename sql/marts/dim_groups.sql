-- The groups, for BI tools: names, timezone, locale and currencies beside the organisation_group_id every
-- mart carries, so a dashboard shows "Acme UK", not 11. Every group that has a record or any order.
-- The API gives a group no currency: currencies are the order currencies its orders carry, and
-- primary_currency the one most of its orders carry (ties by code); null for a group without orders.
-- Names: display_name is what people read; group_slug is the API's `name`, a slug. group_name (the same slug) is
-- deprecated: it stays one release so that BI tools reading it keep working, then goes.
-- grain: one row per organisation_group_id
-- key: organisation_group_id
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id): joins every mart
--   group_name: DEPRECATED (kept one release; removed after it): the same slug as group_slug, which was
--     mistaken for a name; show display_name, join on organisation_group_id
--   display_name: the group's display name: what a dashboard shows (null when only its orders are known)
--   timezone: the group's IANA zone: the marts' days and months are local to it
--   locale: the group's locale, xx_XX
--   is_sandbox: true for a sandbox group
--   primary_currency: the currency most of the group's orders carry
--   currencies: every currency of the group's orders, comma-separated in code order
--   orders: the group's orders (every status)
--   group_slug: the group's slug, the API's `name` (e.g. group-11): an identifier, not for display; null when only
--     its orders are known
--   is_test_group: is_sandbox under the name every mart gives it (false when only the group's orders are known): the
--     finance report leaves a test group out of its totals
-- tests:
--   unique: organisation_group_id
--   not_null: organisation_group_id, orders, is_test_group

with groups as (

    select organisation_group_id from stg_groups
    union
    select distinct organisation_group_id from stg_orders

),

currency_orders as (

    select organisation_group_id, order_currency, count(*) as orders
    from stg_orders
    group by all

),

primary_currency as (

    select organisation_group_id, order_currency as primary_currency
    from currency_orders
    where order_currency is not null
    qualify row_number() over (partition by organisation_group_id order by orders desc, order_currency) = 1

),

currencies as (

    select
        organisation_group_id,
        string_agg(order_currency, ', ' order by order_currency)
            filter (where order_currency is not null) as currencies,
        sum(orders) as orders
    from currency_orders
    group by organisation_group_id

),

final as (

    select
        groups.organisation_group_id,
        stg_groups.group_name,
        stg_groups.display_name,
        stg_groups.timezone,
        stg_groups.locale,
        stg_groups.is_sandbox,
        primary_currency.primary_currency,
        currencies.currencies,
        cast(coalesce(currencies.orders, 0) as bigint) as orders,
        stg_groups.group_name as group_slug,
        coalesce(stg_groups.is_sandbox, false) as is_test_group
    from groups
    left join stg_groups using (organisation_group_id)
    left join primary_currency using (organisation_group_id)
    left join currencies using (organisation_group_id)

)

select * from final
