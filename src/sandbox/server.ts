/**
 * startSandbox: builds the world and the handler, listens on host:port (loopback, port 0 by default),
 * and hands back the URL, the credentials and the controls tests use (advance, faults, stats).
 */
import type { Server } from 'node:http';
import { ConfigError } from '../shared/exit-codes.js';
import { ORGANISATION_CLIENT_ID } from './choices.js';
import {
  createServe,
  FaultInjector,
  fetchHandler,
  listen,
  makeSecret,
  Router,
  SlidingWindow,
  StatsRecorder,
  TokenService,
  type Credential,
  type Handler,
  type SandboxStats,
} from './http/index.js';
import { LoginUrls } from './ops/index.js';
import { SandboxOptionsSchema, type Faults, type SandboxOptions } from './options.js';
import {
  advanceWorld,
  churnWorld,
  holdBackLateOrders,
  World,
  type AdvanceReport,
  type ChurnReport,
} from './world/index.js';

export interface SandboxCredentials {
  group: { client_id: number; client_secret: string; organisation_group_id: number }[];
  organisation: { client_id: number; client_secret: string; organisation_group_ids: number[] };
}

export interface Sandbox {
  baseUrl: string;
  credentials: SandboxCredentials;
  /** The generated data, hidden order times included: tests compute the truth from it. */
  world: World;
  /** The fetch-shaped handler, for in-process calls. */
  handler: Handler;
  /** Moves "today" forward by whole days (new users and orders, status changes, anonymisations). */
  advance(days: number): AdvanceReport;
  /** Changes the world without moving its day (late orders, refunds, users joining and leaving, credit spent). */
  churn(): ChurnReport;
  setFaults(faults: Partial<Faults>): void;
  stats(): SandboxStats;
  /** The CLI's start line: one JSON object with base_url and credentials (SandboxStartLine). */
  startLine(): string;
  close(): Promise<void>;
}

/** What `perks sandbox` prints as its first stdout line, as JSON (scripts and tests read it). */
export interface SandboxStartLine {
  base_url: string;
  credentials: SandboxCredentials;
}

function parseOptions(options: SandboxOptions) {
  const parsed = SandboxOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const name = issue.path.join('.');
  const value = issue.path.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined),
    options,
  );
  throw new ConfigError(
    `sandbox option ${name || '(options)'}${value === undefined ? '' : `=${JSON.stringify(value)}`} is invalid: ${issue.message}`,
  );
}

/**
 * A fresh secret for each group's client and for the organisation's: as the CLI prints them (SandboxCredentials),
 * and as the token service checks them (Credential).
 */
function makeCredentials(world: World): { credentials: SandboxCredentials; creds: Credential[] } {
  const group = world.groups.map((g) => ({
    client_id: g.clientId,
    client_secret: makeSecret(),
    organisation_group_id: g.id,
  }));
  const organisation = {
    client_id: ORGANISATION_CLIENT_ID,
    client_secret: makeSecret(),
    organisation_group_ids: world.groups.map((g) => g.id),
  };
  const creds: Credential[] = [
    ...group.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      kind: 'group' as const,
      groupIds: [c.organisation_group_id],
    })),
    {
      client_id: organisation.client_id,
      client_secret: organisation.client_secret,
      kind: 'organisation',
      groupIds: organisation.organisation_group_ids,
    },
  ];
  return { credentials: { group, organisation }, creds };
}

/** Listens on host:port; failing to (a port in use, an address not this machine's) is a configuration error. */
async function listenOn(serve: Parameters<typeof listen>[0], host: string, port: number): Promise<Server> {
  try {
    return await listen(serve, host, port);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`cannot listen on ${host}:${port}: ${code ?? (err as Error).message}`);
  }
}

/** The server's base URL: the port it got (port 0 asks for any), an IPv6 host in brackets. */
function urlOf(server: Server, host: string, port: number): string {
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const opts = parseOptions(options);
  const world = new World(opts.seed, opts.scale, opts.today);
  world.lateOrderShare = opts.lateOrders;
  holdBackLateOrders(world, opts.lateOrders);
  const { credentials, creds } = makeCredentials(world);
  const shutdown = new AbortController();
  const timers = new Set<NodeJS.Timeout>();
  const faults = new FaultInjector(opts.seed, opts.faults);
  const stats = new StatsRecorder();
  const serve = createServe({
    state: {
      world,
      options: opts,
      logins: new LoginUrls(),
      later: (fn) => {
        const t = setTimeout(() => (timers.delete(t), fn()), 0);
        timers.add(t);
      },
    },
    router: new Router(opts.creditPath),
    tokens: new TokenService(creds, opts.tokenLifetimeSeconds),
    apiLimit: new SlidingWindow(opts.rateLimit),
    tokenLimit: new SlidingWindow(opts.tokenRateLimit),
    faults,
    stats,
    shutdown: shutdown.signal,
  });
  const server = await listenOn(serve, opts.host, opts.port);
  const baseUrl = urlOf(server, opts.host, opts.port);
  return {
    baseUrl,
    credentials,
    world,
    handler: fetchHandler(serve),
    advance: (days) => advanceWorld(world, days),
    churn: () => churnWorld(world),
    setFaults: (f) => faults.set(f),
    stats: () => stats.snapshot(faults.counts, world.interactions.storedCounts()),
    startLine: () => JSON.stringify({ base_url: baseUrl, credentials } satisfies SandboxStartLine),
    close: () =>
      new Promise<void>((resolve) => {
        shutdown.abort();
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
