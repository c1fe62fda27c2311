/** `perks users …`: user administration over the client (import, get, update, deactivate, restore, login-url, anonymise, make-known, stats). */
import type { Argv, CommandModule } from 'yargs';
import { clientFromConfig } from '../api/index.js';
import { DEFAULTS, requireApi, type Config } from '../config/index.js';
import { ExitCode } from '../shared/exit-codes.js';
import {
  addressOf,
  createOneUser,
  formatAction,
  formatImport,
  formatOrders,
  importProgress,
  importUsers,
  runUserCommand,
  userOrders,
  UsersInputError,
  type Format,
  type UserCommand,
} from '../users/index.js';
import { handle } from './handle.js';
import { configFromFlags, outputOf, withApiOptions, type ApiFlags } from './options.js';

interface UsersFlags extends ApiFlags {
  group?: string;
  format?: string;
  dryRun?: boolean;
  id?: string;
  email?: string;
  uid?: string;
  force?: boolean;
  set?: string[];
  keepUid?: boolean;
  getLogin?: boolean;
  from?: string;
  to?: string;
  file?: string;
  sendActivationEmail?: boolean;
  confirmWait?: string;
  loginUrl?: boolean;
}

const FIRST_FIVE_MINUTES = `An integrator's first five minutes (sandbox in another terminal: npx perks sandbox, then export
PERKS_BASE_URL and a group credential's PERKS_CLIENT_ID / PERKS_CLIENT_SECRET from its first line):
  perks users import crm.csv --dry-run      # check the file, see the calls and the time at 120/min
  perks users import crm.csv                # create in bulk (100 per call), confirm each, report
  perks users get --email ada@example.com   # look a user up
  perks users deactivate --uid crm-0042     # offboard: access revoked, data kept
  perks users anonymise --uid crm-0042      # GDPR: anonymised upstream and forgotten in <out>
Every change is appended to <out>/audit/users.jsonl (no secrets, no personal values beyond the user id).`;

function common<T>(y: Argv<T>) {
  return withApiOptions(y)
    .option('group', {
      type: 'string',
      describe: 'organisation_group_id of the user (needed when PERKS_GROUP_IDS names several groups)',
    })
    .option('format', { type: 'string', choices: ['table', 'json'], default: 'table', describe: 'output' })
    .option('dry-run', { type: 'boolean', describe: 'check everything, send nothing' });
}

function addressed<T>(y: Argv<T>) {
  return common(y)
    .option('id', { type: 'string', describe: 'the platform user id' })
    .option('email', { type: 'string', describe: "the user's e-mail address" })
    .option('uid', { type: 'string', describe: 'your own identifier for the user (UID)' });
}

/** The group a user command addresses: --group, or the one group configured; several need --group. */
export function groupOf(config: Config, flag: string | undefined): number | undefined {
  const configured = config.groupIds ?? [];
  if (flag !== undefined) {
    if (!/^[1-9]\d*$/.test(flag.trim()))
      throw new UsersInputError(
        `--group=${JSON.stringify(flag)} is invalid: expected an organisation_group_id, a whole number above 0`,
      );
    const g = Number(flag);
    if (configured.length && !configured.includes(g))
      throw new UsersInputError(
        `--group=${g} is not one of PERKS_GROUP_IDS (${configured.join(',')}): name one of them`,
      );
    return g;
  }
  if (configured.length > 1)
    throw new UsersInputError(
      `name the user's group: --group <id>, one of ${configured.join(',')} (PERKS_GROUP_IDS names several)`,
    );
  return configured[0];
}

function parseSet(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const m = /^([A-Za-z_0-9]+)=(.*)$/s.exec(String(v));
    if (!m)
      throw new UsersInputError(
        `--set ${JSON.stringify(String(v).split('=')[0])} is invalid: expected field=value, e.g. --set first_name=Ada`,
      );
    out[m[1]] = m[2];
  }
  return out;
}

const single = (
  name: UserCommand,
  describe: string,
  extra: (y: Argv<UsersFlags>) => Argv<UsersFlags> = (y) => y,
  example?: string,
): CommandModule<UsersFlags, UsersFlags> => ({
  command: name,
  describe,
  builder: (y) => {
    const b = extra(addressed(y));
    return example ? b.example(example, '') : b;
  },
  handler: (argv) =>
    handle(async () => {
      const address = addressOf(argv);
      const config = configFromFlags(argv);
      const group = groupOf(config, argv.group);
      const api = requireApi(config);
      const client = clientFromConfig(config);
      try {
        const result = await runUserCommand(name, {
          client,
          clientId: api.clientId,
          output: outputOf(argv),
          group,
          address,
          dryRun: argv.dryRun,
          force: argv.force,
          set: parseSet(argv.set),
          keepUid: argv.keepUid,
          getLogin: argv.getLogin,
          from: argv.from,
          to: argv.to,
        });
        process.stdout.write(formatAction(result, (argv.format ?? 'table') as Format));
      } finally {
        await client.close();
      }
    }),
});

const force = (y: Argv<UsersFlags>) =>
  y.option('force', {
    type: 'boolean',
    describe: 'ask the platform even when the local data shows the lifecycle forbids it',
  });
const setter = (y: Argv<UsersFlags>) =>
  y.option('set', {
    type: 'array',
    string: true,
    describe: 'field=value to set (repeatable), e.g. --set first_name=Ada',
  });

const importCommand: CommandModule<UsersFlags, UsersFlags> = {
  command: 'import <file>',
  describe:
    'Create the users of a CSV (header line; email required) or JSON lines file: bulk calls of 100, each user confirmed; rerunnable',
  builder: (y) =>
    common(y)
      .positional('file', {
        type: 'string',
        describe:
          'CSV with a header line (email, first_name, last_name, company_name, UID, phone, ' +
          'send_activation_email, send_activation_sms, meta.sales, meta.location), or .jsonl',
      })
      .option('send-activation-email', {
        type: 'boolean',
        describe:
          "send (or, with --no-send-activation-email, do not send) the welcome e-mail; default: the group's setting",
      })
      .option('confirm-wait', {
        type: 'string',
        default: String(DEFAULTS.usersConfirmWaitSeconds),
        describe: 'seconds to wait, at most, for the platform to process the bulk calls',
      })
      .example('$0 users import crm.csv --dry-run', 'check the file and see the calls it takes')
      .example('$0 users import crm.csv --format json', 'import, the report as JSON'),
  handler: (argv) =>
    handle(async () => {
      if (!/^\d+$/.test(String(argv.confirmWait ?? DEFAULTS.usersConfirmWaitSeconds)))
        throw new UsersInputError(
          `--confirm-wait=${JSON.stringify(argv.confirmWait)} is invalid: expected whole seconds, 0 or more`,
        );
      const config = configFromFlags(argv);
      const group = groupOf(config, argv.group);
      const api = requireApi(config);
      const client = clientFromConfig(config);
      try {
        const result = await importUsers(String(argv.file), {
          client,
          clientId: api.clientId,
          output: outputOf(argv),
          group,
          sendActivationEmail: argv.sendActivationEmail,
          confirmWaitMs: Number(argv.confirmWait ?? DEFAULTS.usersConfirmWaitSeconds) * 1000,
          dryRun: argv.dryRun,
          onProgress: argv.format === 'json' ? undefined : importProgress(),
        });
        process.stdout.write(formatImport(result, (argv.format ?? 'table') as Format, config.rateLimit));
        return result.rejected.length ? ExitCode.partial : ExitCode.success;
      } finally {
        await client.close();
      }
    }),
};

const createCommand: CommandModule<UsersFlags, UsersFlags> = {
  command: 'create',
  describe:
    'Create one user: --set email=… (required), names, UID, phone; --login-url also answers with a single-use login URL',
  builder: (y) =>
    setter(common(y) as unknown as Argv<UsersFlags>)
      .option('login-url', { type: 'boolean', describe: 'create user with login URL (printed, never logged)' })
      .option('send-activation-email', {
        type: 'boolean',
        describe: "send (or not) the welcome e-mail; default: the group's setting",
      })
      .example('$0 users create --set email=ada@example.com --set UID=crm-1 --login-url', ''),
  handler: (argv) =>
    handle(async () => {
      const set = parseSet(argv.set);
      const config = configFromFlags(argv);
      const group = groupOf(config, argv.group);
      const api = requireApi(config);
      const client = clientFromConfig(config);
      try {
        const result = await createOneUser({
          client,
          clientId: api.clientId,
          output: outputOf(argv),
          group,
          set,
          loginUrl: argv.loginUrl,
          sendActivationEmail: argv.sendActivationEmail,
          dryRun: argv.dryRun,
        });
        process.stdout.write(formatAction(result, (argv.format ?? 'table') as Format));
      } finally {
        await client.close();
      }
    }),
};

const ordersCommand: CommandModule<UsersFlags, UsersFlags> = {
  command: 'orders',
  describe: "A user's orders, every page (--from/--to: YYYY-MM-DD HH:MM:SS)",
  builder: (y) =>
    addressed(y)
      .option('from', { type: 'string', describe: 'orders created from (YYYY-MM-DD HH:MM:SS)' })
      .option('to', { type: 'string', describe: 'orders created to (YYYY-MM-DD HH:MM:SS)' })
      .example('$0 users orders --uid crm-1', ''),
  handler: (argv) =>
    handle(async () => {
      const address = addressOf(argv);
      const config = configFromFlags(argv);
      const group = groupOf(config, argv.group);
      requireApi(config);
      if (argv.dryRun) throw new UsersInputError('orders only reads: --dry-run has nothing to leave out');
      const client = clientFromConfig(config);
      try {
        process.stdout.write(
          formatOrders(
            await userOrders({ client, group, address, from: argv.from, to: argv.to }),
            (argv.format ?? 'table') as Format,
          ),
        );
      } finally {
        await client.close();
      }
    }),
};

export const usersCommand: CommandModule<object, UsersFlags> = {
  command: 'users <command>',
  describe:
    'User administration: import a CSV in bulk, create, look up, update, deactivate, restore, login URLs, ' +
    'anonymise (and forget locally), make known, stats, orders',
  builder: (y) =>
    (y as unknown as Argv<UsersFlags>)
      .command(importCommand)
      .command(createCommand)
      .command(
        single('get', 'Look a user up (--id, --email or --uid)', (y) => y, '$0 users get --email ada@example.com'),
      )
      .command(
        single(
          'update',
          'Change a user: --set field=value (repeatable); the e-mail is sent every time, as the spec requires',
          setter,
          '$0 users update --uid crm-1 --set last_name=Lovelace',
        ),
      )
      .command(
        single(
          'deactivate',
          'Offboard a user: access revoked, everything kept (only an active user)',
          force,
          '$0 users deactivate --uid crm-1',
        ),
      )
      .command(single('restore', 'Give a deactivated user access again', force, '$0 users restore --id 4711'))
      .command(
        single(
          'login-url',
          'A single-use URL that signs the user in (printed, never logged)',
          (y) => y,
          '$0 users login-url --email ada@example.com',
        ),
      )
      .command(
        single(
          'anonymise',
          'Anonymise a user upstream (names and e-mail removed; the UID too unless --keep-uid) and forget the ' +
            'user in <out> in the same step; keep the printed id to make the user known again',
          (y) => force(y).option('keep-uid', { type: 'boolean', describe: 'keep the UID upstream (maintain_uid)' }),
          '$0 users anonymise --uid crm-1',
        ),
      )
      .command(
        single(
          'make-known',
          'Make an anonymised user known again: --set email=… required, names, UID and billing_* fields optional',
          (y) => force(setter(y)).option('get-login', { type: 'boolean', describe: 'also answer with a login URL' }),
          '$0 users make-known --id 4711 --set email=ada@example.com',
        ),
      )
      .command(
        single(
          'stats',
          "A user's redemption statistics",
          (y) =>
            y
              .option('from', { type: 'string', describe: 'redemptions created from (timestamp)' })
              .option('to', { type: 'string', describe: 'redemptions created to (timestamp)' }),
          '$0 users stats --uid crm-1',
        ),
      )
      .command(ordersCommand)
      .demandCommand(1, 'Name a users command; `perks users --help` lists them.')
      .epilogue(FIRST_FIVE_MINUTES),
  handler: () => undefined,
};
