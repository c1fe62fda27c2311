/**
 * The sandbox as one handler: route (404/405), token endpoint, authenticate (401),
 * rate limit (429), faults, validate (422), resolve the group (403/422), run the operation, envelope.
 * One error handler turns every SandboxError into its status and JSON body; nothing else escapes as a 500.
 */
import type { Operation, OperationName } from '../../resources/operations.js';
import { redact } from '../../shared/redact.js';
import { FOREIGN_GROUP_STATUS, LOGIN_PATH_PREFIX, UNSCOPED_OPERATIONS } from '../choices.js';
import { SandboxError, HungRequest, fieldError } from '../errors.js';
import { handlers, type SandboxState } from '../ops/index.js';
import type { Principal } from '../principal.js';
import type { GroupRecord } from '../world/groups.js';
import type { TokenService } from './auth.js';
import { readJsonObject, validate, withQueryPaging } from './body.js';
import type { Reply, SandboxRequest, Serve } from './exchange.js';
import type { FaultInjector } from './faults.js';
import type { SlidingWindow, Verdict } from './rate-limit.js';
import { envelopeJson, jsonReply } from './respond.js';
import type { Router } from './router.js';
import type { StatsRecorder } from './stats.js';

export interface Engine {
  state: SandboxState;
  router: Router;
  tokens: TokenService;
  apiLimit: SlidingWindow;
  tokenLimit: SlidingWindow;
  faults: FaultInjector;
  stats: StatsRecorder;
  /** Aborted when the sandbox closes: hung requests end then. */
  shutdown: AbortSignal;
}

function throttled(v: Verdict, retryAfterOverride: number): SandboxError {
  const retryAfter = String(retryAfterOverride || v.retryAfter);
  return new SandboxError('throttled', 429, 'Too Many Attempts.', undefined, {
    'Retry-After': retryAfter,
    'X-RateLimit-Limit': String(v.limit),
    'X-RateLimit-Remaining': '0',
  });
}

function resolveGroup(
  e: Engine,
  name: OperationName,
  op: Operation,
  principal: Principal,
  body: { organisation_group_id?: number },
): GroupRecord {
  const requested = body.organisation_group_id;
  if (requested !== undefined) {
    const group = e.state.world.group(requested);
    if (!group || !principal.groupIds.includes(requested)) {
      throw new SandboxError(
        'forbidden',
        FOREIGN_GROUP_STATUS,
        `The organisation group ${requested} is not available to this client.`,
      );
    }
    return group;
  }
  if (principal.kind === 'organisation' && op.groupScoped && !UNSCOPED_OPERATIONS.has(name)) {
    throw fieldError(
      'organisation_group_id',
      'The organisation_group_id field is required with an organisation-level token.',
    );
  }
  return e.state.world.group(principal.groupIds[0])!;
}

async function token(e: Engine, req: SandboxRequest, seen: (id: unknown) => void): Promise<Reply> {
  const raw = await readJsonObject(req);
  // Counters and rate-limit buckets are keyed by a client id only once it is known to be one of the
  // credentials': a stream of made-up (or 900 kB) ids shares one bucket and stores nothing per id.
  const known = e.tokens.knows(raw.client_id);
  if (known) seen(raw.client_id);
  e.stats.tokenRequest(known ? raw.client_id : undefined);
  if (raw.client_id !== undefined) {
    const verdict = e.tokenLimit.hit(known ? `token:${raw.client_id as string | number}` : UNKNOWN_CLIENT_BUCKET);
    if (!verdict.allowed) throw throttled(verdict, e.faults.current.retryAfter);
  }
  const data = e.tokens.issue(raw);
  return jsonReply(200, { status: 200, timestamp: e.state.world.clock.stamp(), data });
}

function login(e: Engine, req: SandboxRequest, pathname: string): Reply {
  if (req.method !== 'GET')
    throw new SandboxError(
      'method_not_allowed',
      405,
      `The ${req.method} method is not supported for this route. Supported methods: GET.`,
      undefined,
      { Allow: 'GET' },
    );
  const user = e.state.world.users.get(e.state.logins.consume(pathname.slice(LOGIN_PATH_PREFIX.length)));
  if (user) Object.assign(user, { login_count: user.login_count + 1, last_login: e.state.world.now() });
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: '<!doctype html><title>Signed in</title><p>You are signed in.</p>',
  };
}

async function serve(e: Engine, req: SandboxRequest, url: URL, seen: (id: unknown) => void): Promise<Reply> {
  if (url.pathname.startsWith(LOGIN_PATH_PREFIX)) return login(e, req, url.pathname);
  const match = e.router.match(req.method, url.pathname);
  if (match.name === 'token') return token(e, req, seen);
  const principal = e.tokens.authenticate(req.header('authorization'));
  seen(principal.clientId);
  e.stats.apiCall(principal.clientId, match.name);
  const verdict = e.apiLimit.hit(String(principal.clientId));
  if (!verdict.allowed) throw throttled(verdict, e.faults.current.retryAfter);
  if (e.tokens.noteUse(principal, e.faults.current.revokeTokenEvery)) e.faults.counts.revocations++;
  await e.faults.before(req.signal, e.shutdown);
  const body = validate(
    match.op.body,
    withQueryPaging(match.op.body, await readJsonObject(req), url.searchParams),
  ) as Record<string, unknown>;
  const group = resolveGroup(e, match.name, match.op, principal, body);
  const origin = url.origin;
  const result = await handlers[match.name]({
    state: e.state,
    world: e.state.world,
    name: match.name,
    params: match.params,
    body,
    principal,
    group,
    origin,
    pathUrl: `${origin}${url.pathname}`,
  });
  const data = e.faults.drift(match.name, result.data);
  const status = result.status ?? 200;
  const envelope = envelopeJson(status, e.state.world.clock.stamp(), data, result.page);
  const headers = { 'X-RateLimit-Limit': String(verdict.limit), 'X-RateLimit-Remaining': String(verdict.remaining) };
  return jsonReply(status, envelope, headers, (json) => e.faults.maybeTruncate(json));
}

/** The one token rate-limit bucket every unknown client id shares. */
const UNKNOWN_CLIENT_BUCKET = 'token:(unknown client)';

/** Whether the path is one the sandbox serves (an operation's route or a login URL), whatever the method. */
function routed(e: Engine, pathname: string): boolean {
  if (pathname.startsWith(LOGIN_PATH_PREFIX)) return true;
  try {
    e.router.match('GET', pathname);
    return true;
  } catch (err) {
    return err instanceof SandboxError && err.status === 405; // the path exists, with other methods
  }
}

export function createServe(e: Engine): Serve {
  return async (req) => {
    const url = req.url;
    let client: unknown;
    let path = url.pathname;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      /* counted as sent */
    }
    e.stats.request(path, routed(e, url.pathname));
    let res: Reply;
    try {
      res = await serve(e, req, url, (id) => (client = id));
    } catch (err) {
      if (err instanceof HungRequest) throw err;
      if (err instanceof SandboxError) res = jsonReply(err.status, err.body, err.headers);
      else {
        process.stderr.write(
          `perks sandbox: internal error on ${req.method} ${url.pathname}: ${redact(err instanceof Error ? err.message : String(err))}\n`,
        );
        res = jsonReply(500, { message: 'Server Error' });
      }
    }
    e.stats.answered(res.status, client);
    return res;
  };
}
