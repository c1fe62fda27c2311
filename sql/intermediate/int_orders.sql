-- Orders with the user who placed them: the order's email matched, case-insensitively (as the salted
-- email_key), to a current user of the same group. An order whose email matches no current user (an
-- anonymised user, whose email is now null, or an unknown one) keeps user_id null: it is unattributed,
-- and still counts in every group total. If two current users of a group share an email, the order goes
-- to the one not deleted, then the lowest user_id, so an order is never counted twice.
-- month is the group's local month: order_date is already the group's local day.
-- Narrow on purpose (only what savings and engagement read): the join is done once here rather than in
-- each mart. Revenue reads stg_orders directly.
-- grain: one row per organisation_group_id, order_id
-- key: organisation_group_id, order_id
-- materialized: table

with orders as (

    select * from stg_orders

),

users_by_email as (

    select organisation_group_id, email_key, user_id
    from stg_users
    where email_key is not null
    qualify row_number() over (
        partition by organisation_group_id, email_key
        order by deleted_at is not null, user_id
    ) = 1

),

final as (

    select
        orders.organisation_group_id,
        orders.order_id,
        orders.order_date,
        cast(date_trunc('month', orders.order_date) as date) as month,
        users_by_email.user_id,
        orders.order_status,
        orders.order_currency,
        orders.face_value,
        orders.order_credit,
        orders.order_saving
    from orders
    left join users_by_email
        on orders.organisation_group_id = users_by_email.organisation_group_id
        and orders.email_key = users_by_email.email_key

)

select * from final
