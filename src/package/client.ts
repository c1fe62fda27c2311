/**
 * `perks-pipeline/client`: the typed Perks API v3 client for other programs. Every operation of the spec
 * (typed from the zod declarations in src/resources), one token per process reused until a 401, one
 * limiter per credential (PERKS_RATE_LIMIT calls/min, default 120), retries with backoff, pagination and
 * typed errors. See README.md, "The client as a library".
 */
export {
  PerksClient,
  type ClientOptions,
  type CallArgs,
  type Page,
  type PathParams,
  type ListName,
  type ItemOf,
} from '../api/client.js';
export { CredentialLimiter, type LimiterOptions } from '../api/rate-limiter.js';
export { Counters } from '../api/counters.js';
export { ApiError, RecordParseError } from '../api/errors.js';
export type { ApiErrorKind } from '../api/outcomes.js';
export { operations, type Operation, type OperationName, type BodyOf, type DataOf } from '../resources/operations.js';
export * from '../resources/user.js';
export { Group } from '../resources/group.js';
export { Offer, OfferListItem } from '../resources/offer.js';
export { Order } from '../resources/order.js';
export { UserCredit, CreditItem } from '../resources/credit.js';
export { RedemptionStatsItem, UserStats } from '../resources/redemption-stats.js';
export { Interaction } from '../resources/interaction.js';
export { ExitCode, UserFacingError } from '../shared/exit-codes.js';
/** The PERKS_* environment (README, Configuration) to a client: `clientFromConfig(loadConfig())`. */
export { clientFromConfig } from '../api/from-config.js';
export { loadConfig, type Config } from '../config/index.js';
