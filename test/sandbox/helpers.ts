/** Plain-fetch helpers for the sandbox tests (no API client: another folder owns it). */
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

export const TODAY = '2026-11-22';

/** A reply's body as the tests read it: parsed JSON, unchecked (the assertions are the check). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON.parse's own type, named once
export type Body = any;

export interface Reply {
  status: number;
  headers: Headers;
  body: Body;
  text: string;
}

export async function send(
  baseUrl: string,
  path: string,
  init: { body?: unknown; raw?: string; token?: string; method?: string; signal?: AbortSignal } = {},
): Promise<Reply> {
  const res = await fetch(baseUrl + path, {
    method: init.method ?? 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
    signal: init.signal,
  });
  const text = await res.text();
  let body: Body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** A started sandbox plus tokens for the first group's credential and the organisation's. */
export interface Harness {
  sb: Sandbox;
  groupToken: string;
  orgToken: string;
  /** POST (or `method`) with the first group's token. */
  call(path: string, body?: unknown, method?: string): Promise<Reply>;
  /** POST with the organisation token. */
  org(path: string, body?: unknown, method?: string): Promise<Reply>;
  groupId: number;
}

export async function token(sb: Sandbox, client_id: number, client_secret: string): Promise<string> {
  const r = await send(sb.baseUrl, '/v3/oauth/token', {
    body: { client_id, client_secret, grant_type: 'client_credentials', scope: '*' },
  });
  if (r.status !== 200) throw new Error(`token request answered ${r.status}: ${r.text}`);
  return r.body.data.access_token;
}

export async function harness(options: SandboxOptions = {}): Promise<Harness> {
  const sb = await startSandbox({ today: TODAY, rateLimit: 100_000, tokenRateLimit: 1000, ...options });
  const g = sb.credentials.group[0];
  const o = sb.credentials.organisation;
  const groupToken = await token(sb, g.client_id, g.client_secret);
  const orgToken = await token(sb, o.client_id, o.client_secret);
  return {
    sb,
    groupToken,
    orgToken,
    groupId: g.organisation_group_id,
    call: (path, body = {}, method) => send(sb.baseUrl, path, { body, token: groupToken, method }),
    org: (path, body = {}, method) => send(sb.baseUrl, path, { body, token: orgToken, method }),
  };
}

/** Every page of a paginated listing, following current_page until next_page_url is null. */
export async function allPages(
  call: (body: unknown) => Promise<Reply>,
  body: Record<string, unknown>,
  perPage: number,
): Promise<{ items: Body[]; pages: Reply[] }> {
  const items: Body[] = [];
  const pages: Reply[] = [];
  for (let page = 1; ; page++) {
    const r = await call({ ...body, page, per_page: perPage });
    if (r.status !== 200) throw new Error(`page ${page} answered ${r.status}: ${r.text}`);
    pages.push(r);
    items.push(...(Array.isArray(r.body.data) ? r.body.data : r.body.data.credits));
    if (r.body.next_page_url === null || page > 10_000) return { items, pages };
  }
}
