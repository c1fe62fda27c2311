/**
 * `perks demo` (npm start): starts the embedded sandbox, runs the whole job against it, prints the
 * summary, where the files are and what to open and run next, and stops the sandbox. The sandbox's limit is
 * raised so the demo takes about a minute; production keeps 120 calls per minute. Off a terminal its progress is
 * a line per stream (`--progress json` gives the events a scheduled run writes).
 */
import type { CommandModule } from 'yargs';
import { configFrom, DEFAULTS } from '../config/index.js';
import { formatRunSummary, nextSteps, runPipeline } from '../run/index.js';
import { startSandbox } from '../sandbox/index.js';
import { handle } from './handle.js';
import { outputOf, progressFromFlags, progressOption, QUIET, type OutputFlags } from './options.js';

const DEMO_RATE = 15_000;

export const demoCommand: CommandModule<object, OutputFlags & { scale?: string; quiet?: boolean }> = {
  command: 'demo',
  describe: 'Run the whole job against the embedded sandbox (what `npm start` does)',
  builder: (y) =>
    y
      .option('scale', {
        type: 'string',
        choices: ['tiny', 'small'],
        default: 'small',
        describe: 'sandbox data size',
      })
      .option('quiet', QUIET)
      .option('progress', progressOption('lines')),
  handler: (argv) =>
    handle(async () => {
      const sandbox = await startSandbox({ port: 0, scale: argv.scale as 'tiny' | 'small', rateLimit: DEMO_RATE });
      try {
        const org = sandbox.credentials.organisation;
        process.stdout.write(
          `demo: embedded sandbox at ${sandbox.baseUrl}, groups ${org.organisation_group_ids.join(', ')}; ` +
            `its limit is raised to ${DEMO_RATE} calls/min for the demo (production default: ${DEFAULTS.rateLimit})\n`,
        );
        // the environment's settings, the sandbox's address and credentials over them
        const config = configFrom({
          baseUrl: sandbox.baseUrl,
          clientId: org.client_id,
          clientSecret: org.client_secret,
          groupIds: org.organisation_group_ids.join(','),
          rateLimit: DEMO_RATE,
        });
        const summary = await runPipeline(config, {
          output: outputOf(argv),
          emit: progressFromFlags(argv, 'lines'),
        });
        process.stdout.write(formatRunSummary(summary));
        process.stdout.write(`${nextSteps(summary, argv.output).join('\n')}\n`);
        return summary.exitCode;
      } finally {
        await sandbox.close();
      }
    }),
};
