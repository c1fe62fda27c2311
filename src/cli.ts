/** The `perks` command line: one yargs program, one module per command (src/commands/). */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { commands } from './commands/index.js';
import { ExitCode, UserFacingError } from './shared/exit-codes.js';
import { clock } from './shared/clock.js';
import { perksVersion } from './shared/version.js';
import { finishOutputLazily, resolveOutputLazily, type OutputLocation } from './store/lazy.js';
import { COMMANDS, storeCommandName } from './store/layout.js';
import { configFromFlags, OUTPUT } from './commands/options.js';
import { ensureWarehouse } from './transform/index.js';

// The calendar is read from one clock (PERKS_NOW pins it): a malformed value stops here, before any work.
try {
  clock();
} catch (err) {
  if (!(err instanceof UserFacingError)) throw err;
  process.stderr.write(`perks: ${err.message}\n`);
  process.exit(err.exitCode);
}

const cli = yargs(hideBin(process.argv))
  .scriptName('perks')
  .usage('$0 <command> [options]\n\nReporting ETL for the Perks Platform Integration API v3.')
  .strict()
  .demandCommand(1, 'Name a command; `perks --help` lists them.')
  .recommendCommands()
  .help()
  .alias('h', 'help')
  .version(perksVersion())
  .wrap(Math.min(110, process.stdout.columns ?? 110))
  // the one declaration of --output / -o: every command that has an output reads the Output made from it (below)
  .option('output', OUTPUT)
  .fail((msg, err) => {
    if (err) throw err;
    process.stderr.write(`perks: ${msg}\n`);
    process.exit(ExitCode.config);
  });

for (const command of commands) cli.command(command);
/**
 * The output, resolved once per command into the one Output the handlers get as `argv.resolvedOutput` (src/output):
 * a folder, or a store's working copy, brought up to date before the command and published after it (an output in
 * object storage), whose session `perks check` and `perks store push` get as `argv.storeSession`. A store reads the
 * settings here, parsed once for the command: they stay on argv, where the handler's configFromFlags finds them.
 */
let location: OutputLocation | undefined;
cli.middleware(async (argv) => {
  const command = storeCommandName(argv._);
  try {
    location = await resolveOutputLazily(command, argv.output, () => configFromFlags(argv));
  } catch (err) {
    if (!(err instanceof UserFacingError)) throw err;
    process.stderr.write(`perks: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  argv.outputSetting = location.setting;
  argv.resolvedOutput = location.output;
  argv.storeSession = location.session;
  await assembleWarehouse(command, location);
});

/**
 * A store keeps the warehouse in pieces (seed/, src/transform/warehouse/seed.ts): a command that reads it gets the
 * working copy's `warehouse.duckdb` assembled from them when it is not the seed's. A build that cannot have it
 * builds whole (its warning says why); another command stops, saying how to rebuild it.
 */
async function assembleWarehouse(command: string, { output, session }: OutputLocation): Promise<void> {
  if (!session || !output || !COMMANDS[command]?.reads.includes('seed/')) return;
  try {
    const made = await ensureWarehouse(output);
    if (made && process.stderr.isTTY)
      process.stderr.write(
        `warehouse assembled from the store's pieces: ${made.tables} tables, ${made.views} views in ${made.ms} ms\n`,
      );
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (command === 'build' || command === 'run') process.stderr.write(`perks: warning: ${message}\n`);
    else {
      process.stderr.write(`perks: failed: ${message}\n`);
      process.exit(ExitCode.failed);
    }
  }
}

await cli.parseAsync();
await finishOutputLazily(location);
