/**
 * A small hand-written lake, written by DuckDB itself as the contract says (docs/dev/lake-contract.md):
 * Hive partitions in the path only, zstd Parquet, `_extracted_at` and `_run_id` in every file.
 * The expected answers of the tests are worked out from these rows (see marts.test.ts).
 *
 * Groups: 11 Europe/London (GBP, and one EUR order), 12 America/New_York (USD), 13 Australia/Sydney.
 * As of 2026-04-01. Carolyn Zyxwort (user 3 of group 11) is anonymised in the latest users snapshot,
 * but the lake still holds her name and email in an older snapshot, an order, redemption stats and an
 * interaction's details.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, quotedString } from '@duckdb/node-api';

type Value = string | number | boolean | null;
type Row = Record<string, Value>;

const T = {
  BIGINT: 'BIGINT',
  TEXT: 'VARCHAR',
  MONEY: 'DECIMAL(18,2)',
  TS: 'TIMESTAMPTZ',
  BOOL: 'BOOLEAN',
  DATE: 'DATE',
  JSON: 'JSON',
} as const;

/** Column types per stream, from the contract (file columns only: partitions are in the path). */
const TYPES: Record<string, Record<string, string>> = {
  groups: {
    id: T.BIGINT,
    name: T.TEXT,
    display_name: T.TEXT,
    sandbox: T.BOOL,
    locale: T.TEXT,
    timezone: T.TEXT,
    custom_domain: T.TEXT,
    subdomain: T.TEXT,
  },
  users: {
    id: T.BIGINT,
    UID: T.TEXT,
    alt_uid: T.TEXT,
    first_name: T.TEXT,
    last_name: T.TEXT,
    email: T.TEXT,
    status: T.TEXT,
    last_login: T.TS,
    login_count: T.BIGINT,
    created_at: T.TS,
    updated_at: T.TS,
    deleted_at: T.TS,
  },
  orders: {
    order_id: T.BIGINT,
    order_status: T.TEXT,
    first_name: T.TEXT,
    last_name: T.TEXT,
    email: T.TEXT,
    perk_id: T.BIGINT,
    brand: T.TEXT,
    offer: T.TEXT,
    offer_excerpt: T.TEXT,
    face_value: T.MONEY,
    order_total_paid: T.MONEY,
    order_credit: T.MONEY,
    order_currency: T.TEXT,
    order_saving: T.MONEY,
    group_revenue: T.MONEY,
    promo_code: T.TEXT,
  },
  redemption_stats: {
    id: T.BIGINT,
    UID: T.TEXT,
    email: T.TEXT,
    all_redemptions_count: T.BIGINT,
    egift_orders_count: T.BIGINT,
    egift_face_value: T.MONEY,
    egift_cost: T.MONEY,
    egift_savings: T.MONEY,
    window_end: T.DATE,
  },
  credit: { user_id: T.BIGINT, available: T.MONEY, spent: T.MONEY, expired: T.MONEY },
  interactions: {
    id: T.BIGINT,
    interaction_id: T.TEXT,
    organisation_id: T.TEXT,
    interaction_type_id: T.BIGINT,
    user_id: T.BIGINT,
    interaction_at: T.TS,
    interaction_details: T.JSON,
    created_at: T.TS,
    updated_at: T.TS,
  },
};

const literal = (v: Value) => (v === null ? 'NULL' : typeof v === 'string' ? quotedString(v) : String(v));

export class LakeWriter {
  private constructor(
    readonly outDir: string,
    private readonly conn: Awaited<ReturnType<DuckDBInstance['connect']>>,
    private readonly db: DuckDBInstance,
  ) {}

  static async create(outDir: string): Promise<LakeWriter> {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    return new LakeWriter(outDir, conn, db);
  }

  /** One Parquet file; `columns` the file's columns (a subset of the contract's or with extras). */
  async file(
    stream: string,
    partitions: Record<string, string | number>,
    name: string,
    extractedAt: string,
    rows: Row[],
  ): Promise<void> {
    const dir = join(this.outDir, 'lake', stream, ...Object.entries(partitions).map(([k, v]) => `${k}=${v}`));
    mkdirSync(dir, { recursive: true });
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const types = TYPES[stream];
    const select = rows
      .map(
        (r) =>
          `SELECT ${columns.map((c) => `CAST(${literal(r[c] ?? null)} AS ${types[c] ?? 'VARCHAR'}) AS "${c}"`).join(', ')}, ` +
          `CAST(${quotedString(extractedAt)} AS TIMESTAMPTZ) AS _extracted_at, ${quotedString(`run-${extractedAt.slice(0, 13)}`)} AS _run_id`,
      )
      .join(' UNION ALL ');
    await this.conn.run(`COPY (${select}) TO ${quotedString(join(dir, name))} (FORMAT parquet, COMPRESSION zstd)`);
  }

  close(): void {
    this.conn.closeSync();
    this.db.closeSync();
  }
}

const SNAP = { old: '2026-03-30', latest: '2026-03-31' };
const EARLY = '2026-03-30T01:00:00Z';
const LATE = '2026-03-31T02:00:00Z';
const LATER = '2026-03-31T03:00:00Z';

/** The personal data of the anonymised user: none of it may survive the build. */
export const ANONYMISED = {
  first: 'Carolyn',
  last: 'Zyxwort',
  email: 'Carolyn.Zyxwort@example.com',
  uid: 'uid-carolyn-zyxwort',
};

export const user = (id: number, created: string, over: Row = {}): Row => ({
  id,
  UID: `uid-${id}`,
  alt_uid: null,
  first_name: `First${id}`,
  last_name: `Last${id}`,
  email: `user${id}@example.com`,
  status: 'Active',
  last_login: null,
  login_count: 0,
  created_at: created,
  updated_at: created,
  deleted_at: null,
  ...over,
});

export const order = (
  order_id: number,
  email: string | null,
  currency: string,
  money: [number, number, number, number, number],
  over: Row = {},
): Row => ({
  order_id,
  order_status: 'Complete',
  first_name: 'Someone',
  last_name: 'Else',
  email,
  perk_id: 7,
  brand: 'Brand A',
  offer: '10% off',
  offer_excerpt: 'ten',
  face_value: money[0],
  order_total_paid: money[1],
  order_credit: money[2],
  order_currency: currency,
  order_saving: money[3],
  group_revenue: money[4],
  ...over,
});

/** Writes the whole fixture lake under `<outDir>/lake` and returns outDir. */
export async function writeFixtureLake(outDir = mkdtempSync(join(tmpdir(), 'perks-transform-'))): Promise<string> {
  const w = await LakeWriter.create(outDir);
  try {
    const groups: [number, string][] = [
      [11, 'Europe/London'],
      [12, 'America/New_York'],
      [13, 'Australia/Sydney'],
    ];
    for (const [id, timezone] of groups) {
      await w.file('groups', { organisation_group_id: id, _snapshot_date: SNAP.latest }, 'part-0.parquet', LATE, [
        {
          id,
          name: `group-${id}`,
          display_name: `Group ${id}`,
          sandbox: false,
          locale: 'en_GB',
          timezone,
          custom_domain: null,
          subdomain: `g${id}`,
        },
      ]);
    }

    // Group 11, London. The older snapshot still names Carolyn (user 3).
    await w.file('users', { organisation_group_id: 11, _snapshot_date: SNAP.old }, 'part-0.parquet', EARLY, [
      user(1, '2024-01-01T09:00:00Z', {
        email: 'alice@example.com',
        last_login: '2026-03-20T10:00:00Z',
        login_count: 5,
      }),
      user(2, '2024-01-01T09:00:00Z', { email: 'Bob@Example.com' }),
      user(3, '2024-01-01T09:00:00Z', {
        first_name: ANONYMISED.first,
        last_name: ANONYMISED.last,
        email: ANONYMISED.email,
        UID: ANONYMISED.uid,
      }),
      user(99, '2024-01-01T09:00:00Z', { email: 'gone@example.com' }),
    ]);
    const latest11 = [
      // listed again in part-1, extracted later: that row wins (login_count 7)
      user(1, '2024-01-01T09:00:00Z', {
        email: 'alice@example.com',
        last_login: '2026-03-20T10:00:00Z',
        login_count: 5,
      }),
      user(2, '2024-01-01T09:00:00Z', { email: 'Bob@Example.com', last_login: '2025-12-01T10:00:00Z', login_count: 2 }),
      // anonymised: personal fields null, UID removed (maintain_uid false)
      user(3, '2024-01-01T09:00:00Z', {
        first_name: null,
        last_name: null,
        email: null,
        UID: null,
        last_login: '2025-11-01T10:00:00Z',
        login_count: 3,
        status: 'Anonymised',
      }),
      user(4, '2025-01-01T09:00:00Z'),
      user(5, '2026-03-25T10:00:00Z'),
      // created 23:30 UTC on 30 Sep = 00:30 BST on 1 Oct: an October user; last login 00:30 BST on 1 Apr
      user(6, '2025-09-30T23:30:00Z', { last_login: '2026-03-31T23:30:00Z', login_count: 1 }),
      // created 23:30 GMT on 28 Feb (no DST yet): a February user
      user(7, '2026-02-28T23:30:00Z'),
      user(8, '2024-06-01T09:00:00Z', { last_login: '2026-02-01T12:00:00Z', login_count: 4 }),
    ];
    await w.file('users', { organisation_group_id: 11, _snapshot_date: SNAP.latest }, 'part-0.parquet', LATE, latest11);
    // A second file of the same snapshot, extracted later: user 1's latest row wins (login_count 7).
    await w.file('users', { organisation_group_id: 11, _snapshot_date: SNAP.latest }, 'part-1.parquet', LATER, [
      user(1, '2024-01-01T09:00:00Z', {
        email: 'alice@example.com',
        last_login: '2026-03-20T10:00:00Z',
        login_count: 7,
      }),
    ]);
    await w.file('users', { organisation_group_id: 11, _snapshot_date: SNAP.old }, 'part-1.parquet', EARLY, [
      user(1, '2024-01-01T09:00:00Z', { email: 'alice@example.com', login_count: 1 }),
    ]);
    // Group 12, New York: last login 03:30 UTC on 31 Mar = 23:30 EDT on 30 Mar.
    await w.file('users', { organisation_group_id: 12, _snapshot_date: SNAP.latest }, 'part-0.parquet', LATE, [
      user(21, '2025-06-01T12:00:00Z', {
        email: 'erin@example.com',
        last_login: '2026-03-31T03:30:00Z',
        login_count: 9,
      }),
    ]);
    // Group 13, Sydney: 13:30 UTC is 00:30 next day in AEDT (+11) but 23:30 the same day in AEST (+10).
    await w.file('users', { organisation_group_id: 13, _snapshot_date: SNAP.latest }, 'part-0.parquet', LATE, [
      user(31, '2026-03-31T13:30:00Z'), // AEDT: 1 Apr
      user(32, '2025-10-31T13:30:00Z'), // AEDT (DST began 5 Oct): 1 Nov
      user(33, '2025-09-30T13:30:00Z'), // AEST (before DST): 30 Sep
    ]);

    // Orders of group 11. 101 sits in an older file with other values too: the later extraction wins.
    await w.file('orders', { organisation_group_id: 11, order_date: '2026-03-31' }, 'part-old.parquet', EARLY, [
      order(101, 'alice@example.com', 'GBP', [99.99, 99.99, 0, 0, 0]),
    ]);
    await w.file('orders', { organisation_group_id: 11, order_date: '2026-03-31' }, 'part-0.parquet', LATE, [
      order(101, 'alice@example.com', 'GBP', [10, 9, 1, 1, 0.3]),
    ]);
    await w.file('orders', { organisation_group_id: 11, order_date: '2026-04-01' }, 'part-0.parquet', LATE, [
      order(102, ' ALICE@EXAMPLE.COM', 'GBP', [20, 18, 0, 2, 0.6], { promo_code: 'SPRING' }), // an extra column
    ]);
    await w.file('orders', { organisation_group_id: 11, order_date: '2026-03-15' }, 'part-0.parquet', LATE, [
      order(103, 'bob@example.com\u00a0', 'EUR', [50, 45, 5, 5, 1.5]), // a trailing no-break space is trimmed like a blank
      order(104, ANONYMISED.email, 'GBP', [30, 27, 0, 3, 0.9], {
        first_name: ANONYMISED.first,
        last_name: ANONYMISED.last,
      }),
    ]);
    await w.file('orders', { organisation_group_id: 11, order_date: '2026-02-28' }, 'part-0.parquet', LATE, [
      order(105, 'bob@example.com ', 'GBP', [15, 15, 0, 0, 0.45], { order_status: 'Refunded' }),
    ]);
    // Group 12, New York: last local days of months on both sides of the DST end (2 Nov 2025).
    const ny: [string, Row][] = [
      ['2026-03-31', order(201, 'erin@example.com', 'USD', [40, 36, 0, 4, 1.2])],
      ['2026-03-01', order(202, 'erin@example.com', 'USD', [10, 9, 1, 1, 0.3])],
      ['2025-10-31', order(203, 'erin@example.com', 'USD', [11, 10, 0, 1, 0.33])],
      ['2025-11-30', order(204, 'erin@example.com', 'USD', [12, 11, 0, 1, 0.36])],
    ];
    for (const [day, row] of ny)
      await w.file('orders', { organisation_group_id: 12, order_date: day }, 'part-0.parquet', LATE, [row]);

    await w.file(
      'redemption_stats',
      { organisation_group_id: 11, window_start: '2026-03-01' },
      'part-0.parquet',
      LATE,
      [
        {
          id: 1,
          UID: 'uid-1',
          email: 'alice@example.com',
          all_redemptions_count: 2,
          egift_orders_count: 1,
          egift_face_value: 25,
          egift_cost: 22.5,
          egift_savings: 2.5,
          window_end: '2026-04-01',
        },
        {
          id: 3,
          UID: ANONYMISED.uid,
          email: ANONYMISED.email,
          all_redemptions_count: 1,
          egift_orders_count: 1,
          egift_face_value: 10,
          egift_cost: 9,
          egift_savings: 1,
          window_end: '2026-04-01',
        },
        {
          id: 2,
          UID: 'uid-2',
          email: 'bob@example.com',
          all_redemptions_count: 0,
          egift_orders_count: 0,
          egift_face_value: 0,
          egift_cost: 0,
          egift_savings: 0,
          window_end: '2026-04-01',
        },
      ],
    );

    await w.file('credit', { organisation_group_id: 11, _snapshot_date: SNAP.old }, 'part-0.parquet', EARLY, [
      { user_id: 1, available: 1, spent: 0, expired: 0 },
    ]);
    await w.file('credit', { organisation_group_id: 11, _snapshot_date: SNAP.latest }, 'part-0.parquet', LATE, [
      { user_id: 1, available: 5, spent: 2.5, expired: 1 },
    ]);

    const ix = (id: number, userId: number, at: string, details: string): Row => ({
      id,
      interaction_id: `ix-${id}`,
      organisation_id: 'org-1',
      interaction_type_id: 1,
      user_id: userId,
      interaction_at: at,
      interaction_details: details,
      created_at: at,
      updated_at: at,
    });
    await w.file('interactions', { organisation_group_id: 11, _snapshot_date: SNAP.old }, 'part-0.parquet', EARLY, [
      ix(1, 2, '2026-03-10T10:00:00Z', '{"note": "first"}'),
    ]);
    await w.file('interactions', { organisation_group_id: 11, _snapshot_date: SNAP.latest }, 'part-0.parquet', LATE, [
      ix(1, 2, '2026-03-10T10:00:00Z', '{"note": "first, again"}'),
      ix(2, 2, '2026-03-11T10:00:00Z', '{}'),
      ix(3, 1, '2026-03-31T23:30:00Z', '{}'), // 00:30 BST on 1 April
      ix(
        4,
        3,
        '2025-11-01T10:00:00Z',
        JSON.stringify({ contact: ANONYMISED.email, name: `${ANONYMISED.first} ${ANONYMISED.last}` }),
      ),
    ]);
    // offers and writeback_ledger have no files yet.
  } finally {
    w.close();
  }
  return outDir;
}
