/**
 * `perks sandbox`: serves the embedded Perks API v3 sandbox until SIGINT/SIGTERM. The first stdout
 * line is one JSON object with base_url and credentials (scripts read it); nothing else goes to stdout.
 */
import type { CommandModule } from 'yargs';
import { startSandbox, SCALES, type Scale } from '../sandbox/index.js';
import { DEFAULTS } from '../config/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { handle } from './handle.js';

interface SandboxFlags {
  host: string;
  port: string;
  seed: string;
  scale: Scale;
  rateLimit: string;
  today?: string;
  creditPath?: string;
}

function wholeNumber(flag: string, value: string): number {
  if (!/^-?\d+$/.test(value.trim()))
    throw new ConfigError(`--${flag}=${JSON.stringify(value)} is invalid: expected a whole number`);
  return Number.parseInt(value, 10);
}

export const sandboxCommand: CommandModule<object, SandboxFlags> = {
  command: 'sandbox',
  describe: 'Serve the embedded Perks API v3 sandbox; prints {"base_url", "credentials"} as its first line',
  builder: (y) =>
    y
      .option('host', {
        type: 'string',
        default: DEFAULTS.sandbox.host,
        describe: 'address to bind (loopback by default)',
      })
      .option('port', { type: 'string', default: String(DEFAULTS.sandbox.port), describe: 'port (0: any free port)' })
      .option('seed', {
        type: 'string',
        default: String(DEFAULTS.sandbox.seed),
        describe: 'seed of the generated data',
      })
      .option('scale', {
        type: 'string',
        choices: SCALES,
        default: DEFAULTS.sandbox.scale,
        describe: 'data size: tiny, small, medium (~200k orders), large (>1M orders)',
      })
      .option('rate-limit', {
        type: 'string',
        default: String(DEFAULTS.sandbox.rateLimit),
        describe: 'API calls per minute per client_id',
      })
      .option('today', { type: 'string', describe: 'the data\u2019s today, YYYY-MM-DD (default: the real date)' })
      .option('credit-path', {
        type: 'string',
        describe: `path of the user credit operation (default ${DEFAULTS.creditPath})`,
      })
      .example('$0 sandbox --port 4000 --scale small', 'serve a small data set on port 4000') as never,
  handler: (argv) =>
    handle(async () => {
      const sandbox = await startSandbox({
        host: argv.host,
        port: wholeNumber('port', argv.port),
        seed: wholeNumber('seed', argv.seed),
        scale: argv.scale,
        rateLimit: wholeNumber('rate-limit', argv.rateLimit),
        today: argv.today,
        creditPath: argv.creditPath,
      });
      process.stdout.write(`${sandbox.startLine()}\n`);
      process.stderr.write(
        `perks sandbox: listening on ${sandbox.baseUrl} (scale ${argv.scale}, seed ${argv.seed}, today ${sandbox.world.today}); stop with Ctrl-C\n`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await sandbox.close();
    }),
};
