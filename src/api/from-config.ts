/** Builds a client from the validated configuration (env + flags). */
import { requireApi, type Config } from '../config/index.js';
import { PerksClient, type ClientOptions } from './client.js';
import { clusterKey } from './cluster.js';

export function clientFromConfig(config: Config, extra: Partial<ClientOptions> = {}): PerksClient {
  const api = requireApi(config);
  return new PerksClient({
    baseUrl: api.baseUrl,
    clientId: api.clientId,
    clientSecret: api.clientSecret,
    scope: api.scope,
    rateLimit: api.rateLimit,
    creditPath: api.creditPath,
    organisationLevel: (api.groupIds?.length ?? 0) > 0,
    cluster: api.redisUrl ? { redisUrl: api.redisUrl, key: clusterKey(api.baseUrl, api.clientId) } : undefined,
    ...extra,
  });
}
