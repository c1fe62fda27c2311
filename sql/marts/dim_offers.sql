-- The offers (perks) and their brands, for BI tools: one row per perk_id, the key orders carry, so
-- revenue_offers_monthly reads as brands and titles. From the latest offers snapshot; a perk that orders
-- name but the snapshot no longer lists (an offer that ended) still has its row, with the brand its
-- latest order names and no offer details.
-- grain: one row per perk_id
-- key: perk_id
-- columns:
--   perk_id: the perk (orders' perk_id; the offer's type.perk_id)
--   offer_id: the offer's id (null when the offers snapshot no longer lists it)
--   brand_id: the brand's id (null when the offers snapshot no longer lists the offer)
--   brand: the brand's name
--   title: the offer's title
--   offer: the offer's short text (e.g. 10% off)
--   discount: the discount, in percent
--   perk_type_format: the kind of perk (e.g. vouchers)
--   start_date: when the offer started (UTC)
--   end_date: when the offer ends (UTC)
--   redemption_in_store: redeemable in store
--   redemption_online: redeemable online
--   collections: the offer's collections, comma-separated
--   is_listed: true when the latest offers snapshot lists the offer
-- tests:
--   unique: perk_id
--   not_null: perk_id, brand, is_listed

with offers as (

    select *
    from stg_offers
    where coalesce(perk_id, offer_id) is not null
    qualify row_number() over (partition by coalesce(perk_id, offer_id) order by offer_id) = 1

),

ordered_perks as (

    -- the brand the latest order of each perk names
    select perk_id, arg_max(brand, order_date) as brand
    from stg_orders
    where perk_id is not null
    group by perk_id

),

listed as (

    select
        coalesce(perk_id, offer_id) as perk_id,
        offer_id,
        brand_id,
        brand,
        title,
        offer,
        discount,
        perk_type_format,
        start_date,
        end_date,
        redemption_in_store,
        redemption_online,
        array_to_string(list_transform(collections, c -> c.name), ', ') as collections,
        true as is_listed
    from offers

),

unlisted as (

    select
        ordered_perks.perk_id,
        null::bigint as offer_id,
        null::bigint as brand_id,
        coalesce(ordered_perks.brand, '(unknown)') as brand,
        null::varchar as title,
        null::varchar as offer,
        null::bigint as discount,
        null::varchar as perk_type_format,
        null::timestamptz as start_date,
        null::timestamptz as end_date,
        null::boolean as redemption_in_store,
        null::boolean as redemption_online,
        null::varchar as collections,
        false as is_listed
    from ordered_perks
    anti join listed using (perk_id)

),

final as (

    select * from listed
    union all by name
    select * from unlisted

)

select * from final
