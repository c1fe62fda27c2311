-- Orders, one row per order: the latest extraction of each order wins (a key seen in two files keeps
-- the row with the latest _extracted_at).
-- order_date is the group's LOCAL day of the window the order was extracted with: orders carry no
-- timestamp of their own, so month = date_trunc('month', order_date) is already the group's local month.
-- Kept lean (ten million rows are written here): the offer texts (offer, offer_excerpt) stay in
-- lake_orders; perk_id joins stg_offers.
-- Personal data: no names, no email. email_key is md5_number_lower(salt || lower(trim(email))) with a
-- salt that is random per build: it joins orders to stg_users within a build and means nothing after it.
-- grain: one row per organisation_group_id, order_id
-- key: organisation_group_id, order_id
-- tests:
--   not_null: organisation_group_id, order_id, order_date

with source as (

    select * from lake_orders

),

renamed as (

    select
        cast(organisation_group_id as bigint) as organisation_group_id,
        cast(order_date as date) as order_date,
        order_id,
        order_status,
        perk_id,
        brand,
        order_currency,
        face_value,
        order_total_paid,
        order_credit,
        order_saving,
        group_revenue,
        -- null for a null or blank email (the concatenation is null)
        md5_number_lower(getvariable('email_salt') || nullif(lower(trim(email)), '')) as email_key,
        _extracted_at as extracted_at,
        _run_id as run_id
    from source

)

select * exclude (run_id) from renamed
qualify row_number() over (
    partition by organisation_group_id, order_id
    order by extracted_at desc, run_id desc
) = 1
