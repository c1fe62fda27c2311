/** `perks writeback`: posts the interactions sql/writeback/ produces, exactly once; or checks them (--verify). */
import type { CommandModule } from 'yargs';
import { clientFromConfig } from '../api/index.js';
import { requireApi, type Config } from '../config/index.js';
import type { Output } from '../output/index.js';
import { ConfigError, ExitCode } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import {
  heldLine,
  parseTypeMap,
  runWriteback,
  TYPES_ENV,
  verifyWriteback,
  type VerifyResult,
  type WritebackResult,
} from '../writeback/index.js';
import { handle } from './handle.js';
import { type ApiFlags, configFromFlags, outputOf, withApiOptions } from './options.js';
import { Lineage, writebackDatasets } from '../lineage/index.js';
import { newRunId } from '../shared/run-id.js';

interface WritebackFlags extends ApiFlags {
  dryRun?: boolean;
  limit?: number;
  verify?: boolean;
  types?: string;
  retryRejected?: boolean;
  settlePendingAsRejected?: string;
}

export const writebackCommand: CommandModule<object, WritebackFlags> = {
  command: 'writeback',
  describe: 'Post the interactions the write-back models produce (sql/writeback/), each exactly once',
  builder: (y) =>
    withApiOptions(y)
      .option('dry-run', { type: 'boolean', describe: 'print counts per type and the first rows; send nothing' })
      .option('limit', {
        type: 'number',
        describe: 'post at most N rows in this run; the rest wait for the next (wins over PERKS_WRITEBACK_LIMIT)',
      })
      .option('verify', {
        type: 'boolean',
        describe: 'report rows the ledger says were sent but the platform does not show (sends nothing)',
      })
      .option('types', { type: 'string', describe: `kind=interaction_type pairs, comma-separated (${TYPES_ENV})` })
      .option('retry-rejected', {
        type: 'boolean',
        describe: 'post again the rows the ledger records as rejected (e.g. after fixing the types)',
      })
      .option('settle-pending-as-rejected', {
        type: 'string',
        describe: 'interaction ids left pending that can never be looked up: record them as rejected, never post them',
      })
      .example('$0 writeback --dry-run', 'what would be sent')
      .example('$0 writeback --limit 500', 'send at most 500 interactions')
      .example(
        '$0 writeback --types segment_change=engagement --retry-rejected',
        'send again rows rejected for a wrong type',
      )
      .example('$0 writeback --verify', 'reconcile the ledger with the landed interactions'),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const limit = argv.limit ?? config.writebackLimit; // --limit wins over PERKS_WRITEBACK_LIMIT
      if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0))
        throw new ConfigError(`--limit=${String(limit)} is invalid: expected a whole number of rows, 0 or more`);
      const settlePending = parseIds(argv.settlePendingAsRejected);
      if (settlePending && argv.dryRun)
        throw new ConfigError('--settle-pending-as-rejected cannot be combined with --dry-run: it records outcomes');
      const output = outputOf(argv);
      if (argv.verify) return verify(config, output);
      const types = argv.types === undefined ? undefined : parseTypeMap(argv.types);
      const lineage = Lineage.of(config, output);
      const runId = newRunId('wb-'); // the ledger's and the events' run id
      return lineage.around(
        'writeback',
        async (run) => {
          const result = await runWriteback({
            output,
            config,
            dryRun: argv.dryRun,
            limit,
            types,
            retryRejected: argv.retryRejected,
            settlePending,
            runId,
          });
          run.ending = { io: () => writebackDatasets(lineage.place, result) };
          process.stdout.write(redact(formatWriteback(result)));
          return result.status === 'partial' ? ExitCode.partial : ExitCode.success;
        },
        { runId },
      );
    }),
};

function parseIds(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  if (!/^\s*\d+(\s*,\s*\d+)*\s*$/.test(text))
    throw new ConfigError(
      `--settle-pending-as-rejected=${JSON.stringify(text)} is invalid: expected interaction ids separated by commas`,
    );
  return text.split(',').map((v) => Number(v.trim()));
}

async function verify(config: Config, output: Output): Promise<number> {
  let client;
  try {
    client = clientFromConfig(requireApi(config));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write('perks: writeback --verify: no API credentials, checking the landed interactions only\n');
  }
  try {
    const result = await verifyWriteback({ output, client });
    process.stdout.write(redact(formatVerify(result)));
    // Rows nobody could check are not a clean bill: a scheduler must not read them as verified.
    return result.missing.length || result.unchecked ? ExitCode.partial : ExitCode.success;
  } finally {
    await client?.close();
  }
}

/** A dry run's first line: what would be sent, and what would not. */
function dryRunLine(r: WritebackResult): string {
  const beyond = r.deferred ? ` (${r.deferred} beyond --limit)` : '';
  return [
    `writeback dry run: ${r.rows} rows from the models, ${r.to_send} to send${beyond}`,
    `${r.skipped_already_sent} already sent`,
    `${r.skipped_rejected} rejected before`,
    `${r.pending} pending to look up upstream; nothing sent`,
  ].join(', ');
}

/** A run's first line: every count it has, those that are 0 left out after the first six. */
function runLine(r: WritebackResult): string {
  const counts = [
    `${r.sent} sent`,
    `${r.rejected} rejected`,
    `${r.skipped_already_sent} already sent`,
    `${r.skipped_rejected} rejected before`,
    `${r.recovered_pending} pending found upstream`,
    `${r.reposted_pending} pending posted again`,
    ...(r.unresolved_pending.length ? [`${r.unresolved_pending.length} pending unresolved (left pending)`] : []),
    ...(r.settled_pending ? [`${r.settled_pending} pending settled as rejected`] : []),
    ...(r.retried_rejected ? [`${r.retried_rejected} rejected retried`] : []),
    ...(r.deferred ? [`${r.deferred} left for the next run (--limit)`] : []),
  ];
  return `writeback ${r.run_id}: ${r.status}: ${counts.join(', ')}; ${r.calls} calls in ${(r.ms / 1000).toFixed(1)} s`;
}

export function formatWriteback(r: WritebackResult): string {
  const lines = [
    r.dry_run ? dryRunLine(r) : runLine(r),
    `  ${'kind'.padEnd(20)} ${'interaction_type'.padEnd(24)} ${'rows'.padStart(8)} ${'to send'.padStart(8)}`,
    ...r.by_type.map(
      (t) =>
        `  ${t.kind.padEnd(20)} ${t.interaction_type.padEnd(24)} ${String(t.rows).padStart(8)} ${String(t.to_send).padStart(8)}`,
    ),
  ];
  if (r.dry_run && r.preview.length) {
    lines.push(`first ${r.preview.length} rows:`);
    for (const p of r.preview) {
      lines.push(
        `  ${p.interaction_id}  group ${p.organisation_group_id}  ${p.identifier}=${p.identifier_value}  ` +
          `${p.interaction_type}  ${p.interaction_at}  ${JSON.stringify(p.interaction_details)}`,
      );
    }
  }
  for (const x of r.rejections.slice(0, 10))
    lines.push(`  rejected ${x.interaction_id} (${x.kind}, user ${x.identifier_value}): ${x.message}`);
  if (r.rejections.length > 10)
    lines.push(`  … and ${r.rejections.length - 10} more rejected (see the ledger: ${r.ledger})`);
  for (const u of r.unresolved_pending.slice(0, 10))
    lines.push(`  unresolved pending ${u.interaction_id} (${u.kind}, user ${u.identifier_value}): ${u.reason}`);
  if (r.unresolved_pending.length > 10)
    lines.push(`  … and ${r.unresolved_pending.length - 10} more unresolved pending`);
  for (const h of r.held) lines.push(`  ${heldLine(h)}`);
  const l = r.learned;
  if (l && (l.fromLake || l.usersListed))
    lines.push(
      `  ${l.reason === 'not needed' ? '' : `${l.reason}: `}${l.fromLake + l.fromApi} rows the ledger did not know ` +
        `were already stored upstream (${l.fromLake} seen in the extracted interactions, ${l.fromApi} by listing ` +
        `${l.usersListed} users in ${l.calls} calls): recorded as sent, not posted again`,
    );
  if (r.unresolved_pending.length)
    lines.push(
      `  unresolved rows stay pending and are looked up again next run; to give up on them: perks writeback --settle-pending-as-rejected <ids>`,
    );
  if (!r.dry_run) lines.push(`  ledger: ${r.ledger}`);
  return `${lines.join('\n')}\n`;
}

export function formatVerify(r: VerifyResult): string {
  const lines = [
    `writeback verify: ${r.sent} sent per the ledger, ${r.seen_in_lake} seen in the landed interactions, ` +
      `${r.seen_via_api} seen through the API, ${r.missing.length} missing` +
      (r.unchecked
        ? `, ${r.unchecked} unchecked (not extracted since they were sent, and no API credentials): ` +
          'not verified, rerun with credentials or after the next extract'
        : ''),
  ];
  for (const m of r.missing.slice(0, 20)) {
    lines.push(
      `  missing ${m.interaction_id} (${m.kind}, group ${m.organisation_group_id}, ` +
        `${m.identifier}=${m.identifier_value}, sent ${m.attempted_at}; checked in the ${m.checked})`,
    );
  }
  if (r.missing.length > 20) lines.push(`  … and ${r.missing.length - 20} more`);
  return `${lines.join('\n')}\n`;
}
