/**
 * `perks store push <folder>`: moves an existing local output into an empty store, as its first generation.
 * `perks store check`: what the bucket behind PERKS_OUTPUT can do for a store (src/store/check.ts).
 */
import { cp, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { ConfigError, ExitCode } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import { checkStore, isStoreUrl, parseStoreUrl, StoreClient } from '../store/index.js';
import type { FolderName } from '../output/index.js';
import { handle } from './handle.js';
import { configFromFlags, type OutputFlags } from './options.js';

interface PushFlags extends OutputFlags {
  folder: string;
}

/** What makes a folder a perks output: at least one of these of its top folders (output/folders.ts). */
const MARKS: FolderName[] = ['lake', 'state', 'closes', 'runs'];

const push: CommandModule<object, PushFlags> = {
  command: 'push <folder>',
  describe: 'copy an existing output folder into an empty store (PERKS_OUTPUT=s3://…) as its first publish',
  builder: (y) =>
    y
      .positional('folder', { type: 'string', demandOption: true, describe: 'the output folder, e.g. ./output' })
      .example('PERKS_OUTPUT=s3://acme-perks/prod $0 store push ./output', 'the CI cache of before, into the store'),
  handler: (argv) =>
    handle(async () => {
      const session = argv.storeSession;
      if (!session)
        throw new ConfigError('perks store push needs a store as output: --output s3://bucket/prefix or PERKS_OUTPUT');
      const info = await stat(argv.folder).catch(() => undefined);
      if (!info?.isDirectory()) throw new ConfigError(`${argv.folder} is not a folder`);
      const names = await readdir(argv.folder);
      if (!MARKS.some((m) => names.includes(m)))
        throw new ConfigError(`${argv.folder} is not a perks output (no ${MARKS.join(', ')} folder in it)`);
      if (session.generation > 0)
        throw new ConfigError(
          `${session.client.store.url} already holds an output (generation ${session.generation}): push only into an empty store`,
        );
      // the copy (empty) takes the folder's files; publishing them after the command makes generation 1
      for (const name of names)
        if (!name.startsWith('.')) await cp(join(argv.folder, name), join(session.copy, name), { recursive: true });
      process.stdout.write(`pushing ${argv.folder} into ${session.client.store.url}\n`);
    }),
};

const check: CommandModule<object, OutputFlags> = {
  command: 'check',
  describe:
    'probe the bucket of PERKS_OUTPUT=s3://…: listing, conditional writes (If-None-Match, If-Match and its ETag form), CopyObject; exit 0 usable, 2 not',
  builder: (y) =>
    y.example(
      'PERKS_OUTPUT=s3://acme-perks/prod AWS_ENDPOINT_URL_S3=https://rgw.example $0 store check',
      'before the first run on a new S3 service',
    ),
  handler: (argv) =>
    handle(async () => {
      const setting = argv.outputSetting;
      const url = setting?.value ?? '';
      if (!isStoreUrl(url))
        throw new ConfigError('perks store check needs a store as output: --output s3://bucket/prefix or PERKS_OUTPUT');
      const config = configFromFlags(argv);
      const client = new StoreClient(
        parseStoreUrl(url, setting?.source === '--output' ? '--output' : 'PERKS_OUTPUT'),
        config,
      );
      try {
        process.stdout.write(`store ${client.where}\n`);
        const found = await checkStore(client, Boolean(config.redisUrl));
        for (const f of found.findings)
          process.stdout.write(`${f.ok ? 'ok  ' : 'FAIL'} ${f.what}: ${redact(f.text)}\n`);
        process.stdout.write(
          found.usable
            ? 'usable: every perks command can write this store as configured\n'
            : 'not usable as configured: see the FAIL lines (docs/reference/store.md, providers)\n',
        );
        return found.usable ? ExitCode.success : ExitCode.config;
      } finally {
        client.destroy();
      }
    }),
};

export const storeCommand: CommandModule<object, object> = {
  command: 'store <command>',
  describe: 'the output in object storage: push an existing folder into an empty store; check what a bucket can do',
  builder: (y) => y.command(push).command(check).demandCommand(1),
  handler: () => undefined,
};
