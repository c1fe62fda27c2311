/** `perks forget`: clears users' personal values from every file of the output directory. */
import type { CommandModule } from 'yargs';
import { forgetAnonymised, forgetUsers, ForgetInputError, type ForgetResult } from '../forget/index.js';
import { handle } from './handle.js';
import { configFromFlags, outputOf, type OutputFlags } from './options.js';
import { forgetDatasets, Lineage } from '../lineage/index.js';
import { relativeStreamDir } from '../lake/index.js';

interface ForgetFlags extends OutputFlags {
  user?: (string | number)[];
  anonymised?: boolean;
}

export function parseUsers(values: (string | number)[] | undefined): number[] {
  return (values ?? [])
    .flatMap((v) => String(v).split(','))
    .map((v) => {
      const id = v.trim();
      if (!/^\d+$/.test(id) || Number(id) <= 0 || !Number.isSafeInteger(Number(id)))
        throw new ForgetInputError(
          `--user=${JSON.stringify(v)} is invalid: expected a platform user id, a whole number above 0`,
        );
      return Number(id);
    });
}

export const forgetCommand: CommandModule<object, ForgetFlags> = {
  command: 'forget',
  describe: "Clear users' names and emails from every file of <out> (old snapshots and windows included)",
  builder: (y) =>
    y
      .option('user', { type: 'array', string: true, describe: 'platform user id (repeat, or comma-separated)' })
      .option('anonymised', {
        type: 'boolean',
        describe: 'every user the latest users snapshot shows anonymised upstream (perks run does this itself)',
      })
      .example('$0 forget --user 4711', "one user's personal data")
      .example('$0 forget --anonymised', 'everyone anonymised upstream since the data was landed'),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const ids = parseUsers(argv.user);
      if (!ids.length && !argv.anonymised)
        throw new ForgetInputError('name the users to forget: --user <id> (repeatable) or --anonymised');
      const output = outputOf(argv);
      const lineage = Lineage.of(config, output);
      await lineage.around('forget', async (run) => {
        const result = argv.anonymised ? await forgetAnonymised(output) : await forgetUsers(output, ids);
        run.ending = { io: () => forgetDatasets(lineage.place, result) };
        process.stdout.write(formatForget(result));
      });
    }),
};

export function formatForget(r: ForgetResult): string {
  if (!r.users.length) return 'nothing to forget: no user in the lake is anonymised upstream with data left behind\n';
  const streams = Object.entries(r.streams).map(([s, t]) => `${relativeStreamDir(s)} ${t.files} files, ${t.rows} rows`);
  const lines = [
    `forgot ${r.users.length} user(s) (${r.users.slice(0, 10).join(', ')}${r.users.length > 10 ? ', …' : ''}): ` +
      `${r.files} files rewritten, ${r.rows} rows cleared, ${r.quarantineLines} quarantined records scrubbed`,
    `  ${streams.join('; ')}`,
  ];
  if (r.emails === 0)
    lines.push(
      '  no email address is known for them in the lake: orders (which carry no user id) could not be matched',
    );
  return `${lines.join('\n')}\n`;
}
