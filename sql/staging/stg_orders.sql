-- Orders, one row per order, with the current user who placed it.
-- The latest extraction of each order wins: a key landed in two files (a window re-landed under another
-- day, e.g. after a group's timezone changed) keeps the row with the latest _extracted_at. Only those
-- rare keys are ranked; every other order is taken as it is (ranking ten million rows costs seconds).
-- order_date is the group's LOCAL day of the window the order was extracted with: orders carry no
-- timestamp of their own, so month = date_trunc('month', order_date) is already the group's local month.
-- user_id: the current user of the group whose email is the order's (stg_user_emails: case-insensitive,
-- blanks ignored); null when none is (anonymised, unknown or no email): the order is unattributed.
-- Kept lean (ten million rows are written here): no names or email; the offer texts (offer,
-- offer_excerpt) stay in lake_orders; perk_id joins stg_offers.
-- Built by intervals (src/transform/incremental.ts): a group's month is rebuilt only when its lake files
-- changed or a user's email matching one of its orders did; a key found in two months makes the build whole.
-- grain: one row per organisation_group_id, order_id
-- key: organisation_group_id, order_id
-- incremental: month on organisation_group_id, order_date
-- lookup: stg_user_emails(email) = lower(trim(email))
-- (the join below trims only where needed; a user's email is trimmed, so every order it matches also matches
-- lower(trim(email)), and the lookup never misses an order whose user changed)
-- (unique by construction: a unique test would rank ten million keys a second time)
-- columns:
--   organisation_group_id: the group (Perks organisation_group_id)
--   order_date: the group's LOCAL day of the window the order was extracted with (orders carry no timestamp)
--   order_id: the order (Perks order id)
--   user_id: the current user whose email is the order's; null when none is (the order is unattributed)
--   order_status: order status as the API reports it (e.g. Complete, Refunded)
--   perk_id: the perk ordered (joins stg_offers); null when the order names none
--   brand: brand of the perk, as the order carries it
--   order_currency: currency of the order
--   face_value: the perk's value at full price
--   order_total_paid: what the user paid
--   order_credit: platform credit spent on the order
--   order_saving: what the user saved (order_saving)
--   group_revenue: the group's revenue from the order
--   extracted_at: when the row was extracted (UTC; the start of the extract run that landed it)
-- tests:
--   not_null: organisation_group_id, order_id, order_date

with repeated as (

    -- keys landed more than once
    select organisation_group_id, order_id
    from lake_orders
    group by all
    having count(*) > 1

),

deduplicated as (

    select * from lake_orders
    anti join repeated using (organisation_group_id, order_id)
    union all by name
    (
        select lake_orders.* from lake_orders
        semi join repeated using (organisation_group_id, order_id)
        qualify row_number() over (
            partition by organisation_group_id, order_id
            order by _extracted_at desc, _run_id desc
        ) = 1
    )

),

final as (

    select
        cast(orders.organisation_group_id as bigint) as organisation_group_id,
        cast(orders.order_date as date) as order_date,
        orders.order_id,
        emails.user_id,
        orders.order_status,
        orders.perk_id,
        orders.brand,
        orders.order_currency,
        orders.face_value,
        orders.order_total_paid,
        orders.order_credit,
        orders.order_saving,
        orders.group_revenue,
        orders._extracted_at as extracted_at
    from deduplicated as orders
    left join stg_user_emails as emails
        on cast(orders.organisation_group_id as bigint) = emails.organisation_group_id
        -- lower(trim(email)), as stg_user_emails keys them; trim() (blanks and other Unicode spaces) only runs
        -- where there can be one to remove: a blank at either end or a non-ASCII character (strlen counts bytes,
        -- length characters). Trimming every order costs about half a CPU second per ten million orders.
        and lower(case
            when starts_with(orders.email, ' ') or ends_with(orders.email, ' ')
                or strlen(orders.email) <> length(orders.email)
                then trim(orders.email)
            else orders.email
        end) = emails.email

)

select * from final
