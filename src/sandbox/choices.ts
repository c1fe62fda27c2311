/**
 * Every place where the spec says "not shown", the sandbox's choice, one named constant each.
 * docs/assumptions.md (## Sandbox) lists the same choices; the pipeline must not depend on them.
 */

/** User status strings: the spec shows only "Active". */
export const USER_STATUS = { active: 'Active', deactivated: 'Deactivated', anonymised: 'Anonymised' } as const;
export type UserStatus = (typeof USER_STATUS)[keyof typeof USER_STATUS];

/**
 * Order statuses: the spec shows only "Complete". Orders are generated in the first four; Disputed is never
 * generated, only set by churn (world/churn.ts) on an old order, as a platform that adds a status would.
 */
export const ORDER_STATUSES = ['Complete', 'Pending', 'Refunded', 'Cancelled', 'Disputed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Credit item statuses: the spec shows only "Available". */
export const CREDIT_STATUS = { available: 'Available', spent: 'Spent', expired: 'Expired' } as const;

/** A create of a user that exists (active, deactivated, or anonymised with its UID kept): Laravel's unique rule. */
export const DUPLICATE_USER_STATUS = 422;
/** organisation_group_id names a group outside the token's organisation (or another group than a group token's). */
export const FOREIGN_GROUP_STATUS = 403;
/** A transition the lifecycle table does not allow from the user's state (restore an active user, …). */
export const WRONG_STATE_STATUS = 409;
/** Validation errors: Laravel's status and body {message, errors: {field: [..]}}. */
export const VALIDATION_STATUS = 422;
/** A login URL opened a second time. */
export const USED_LOGIN_URL_STATUS = 410;
/** Request bodies above MAX_BODY_BYTES. */
export const BODY_TOO_LARGE_STATUS = 413;
export const MAX_BODY_BYTES = 1_000_000;

/** The token endpoint's own limit, per client_id and sliding minute. */
export const TOKEN_RATE_LIMIT_PER_MINUTE = 10;
/** The API rate limit's window (sliding, per client_id). */
export const RATE_WINDOW_MS = 60_000;

/** The spec scopes user, group, order, credit and interaction requests by group; offers are organisation-wide. */
export const UNSCOPED_OPERATIONS: ReadonlySet<string> = new Set(['getOffer', 'listOffers', 'listGroups']);
/** The offer-details path also appears once in the spec in this form: both are served. */
export const OFFER_PATH_ALIAS = '/v3/offers/{id}';
/** The single-use login URLs point here (GET, outside the API). */
export const LOGIN_PATH_PREFIX = '/sso/';

/** organisation_id as interactions carry it (a string in the spec). */
export const ORGANISATION_ID = '1';
export const ORGANISATION_CLIENT_ID = 100;

/** Interaction types the sandbox knows by name; any other non-empty name gets the next id. */
export const INTERACTION_TYPES = ['email_open', 'email_click', 'offer_view', 'app_login', 'survey_response'] as const;
