-- Offers of the organisation's latest offers snapshot (offers are not group scoped in the API).
-- The HTML texts (overview, terms, faq, how_to_redeem) stay in lake_offers.
-- grain: one row per offer_id
-- key: offer_id
-- columns:
--   offer_id: the offer (Perks offer id)
--   brand: the brand offering it
--   brand_id: the brand (platform id)
--   title: the offer's title
--   offer: the offer in a few words (e.g. 10% off)
--   start_date: first day the offer runs
--   end_date: last day the offer runs; null when open-ended
--   redemption_in_store: redeemable in store
--   redemption_online: redeemable online
--   redemption_selected_stores: redeemable in selected stores only
--   link: the offer's link
--   image: the offer's image URL
--   discount: the discount as the API gives it
--   perk_type_format: the perk type's format as the API gives it
--   collections: the collections the offer is listed in
--   perk_id: the perk (joins orders' perk_id): from the offer's type
--   offer_type: the offer's type as the API gives it (a struct, perk_id among its fields)
--   snapshot_date: the UTC day of the snapshot the row comes from
--   extracted_at: when the row was extracted (UTC; the start of the extract run that landed it)
-- tests:
--   unique: offer_id
--   not_null: offer_id

with source as (

    select * from lake_offers
    where _snapshot_date = (select max(_snapshot_date) from lake_offers)

),

renamed as (

    select
        id as offer_id,
        brand,
        brand_id,
        title,
        offer,
        start_date,
        end_date,
        redemption_in_store,
        redemption_online,
        redemption_selected_stores,
        link,
        image,
        discount,
        perk_type_format,
        collections,
        type.perk_id as perk_id,
        type as offer_type,
        cast(_snapshot_date as date) as snapshot_date,
        _extracted_at as extracted_at
    from source
    qualify row_number() over (partition by id order by _extracted_at desc, _run_id desc) = 1

)

select * from renamed
