/** The Perks API client: typed operations, token lifecycle, one limiter per credential, retries, pagination. */
export {
  PerksClient,
  type ClientOptions,
  type CallArgs,
  type Page,
  type PathParams,
  type ListName,
  type ItemOf,
} from './client.js';
export { CredentialLimiter, type LimiterOptions } from './rate-limiter.js';
export { Counters, inScope, type ScopeTraffic } from './counters.js';
export { ApiError, ClusterError, PauseTooLongError, RecordParseError } from './errors.js';
export type { ApiErrorKind } from './outcomes.js';
export type { WireEvent } from './transport.js';
export { clusterKey, describeRedisUrl, CLUSTER_DEFAULTS, type ClusterSettings } from './cluster.js';
export { clientFromConfig } from './from-config.js';
