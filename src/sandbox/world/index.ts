/** The sandbox's data: the World (generated, deterministic) and advancing it in time. */
export { World, HISTORY_DAYS } from './world.js';
export { advanceWorld, type AdvanceReport } from './advance.js';
export { churnWorld, holdBackLateOrders, type ChurnReport } from './churn.js';
export type { GroupRecord } from './groups.js';
export type { OrderRecord } from './order-store.js';
export type { UserRecord } from './users.js';
export type { CreditRecord, CreditItemRecord } from './credit.js';
export type { InteractionRecord } from './interactions.js';
export type { OfferRecord } from './offers.js';
