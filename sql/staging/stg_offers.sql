-- Offers of the organisation's latest offers snapshot (offers are not group scoped in the API).
-- The HTML texts (overview, terms, faq, how_to_redeem) stay in lake_offers.
-- grain: one row per offer_id
-- key: offer_id
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
