/**
 * The single-user commands: get, update, deactivate, restore, login-url, anonymise, make-known, stats.
 * Each checks its input, refuses what the lifecycle forbids from the local state (before any call;
 * --force asks the platform anyway), makes one call through the client (update without a new e-mail
 * reads the current one first), audits every state-changing call with the platform's answer, and
 * returns what happened as data. Anonymise also forgets the user in the output directory.
 */
import { ApiError, type PerksClient } from '../api/index.js';
import { forgetUsers, type ForgetResult } from '../forget/index.js';
import { operations, type OperationName } from '../resources/operations.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { appendAudit, operator } from './audit.js';
import { pathOf, type Address } from './address.js';
import { UsersInputError } from './errors.js';
import { checkTransition, TRANSITIONS, type Transition, type LocalView } from './lifecycle.js';
import { localUser, snapshotBasis, type LocalUser } from './local-state.js';

export const USER_COMMANDS = [
  'get',
  'update',
  'deactivate',
  'restore',
  'login-url',
  'anonymise',
  'make-known',
  'stats',
] as const;
export type UserCommand = (typeof USER_COMMANDS)[number];

const OPERATION: Record<UserCommand, OperationName> = {
  get: 'getUser',
  update: 'updateUser',
  deactivate: 'deactivateUser',
  restore: 'restoreUser',
  'login-url': 'loginUrl',
  anonymise: 'anonymiseUser',
  'make-known': 'makeKnownUser',
  stats: 'userStats',
};
/** Commands that change something on the platform: audited. */
const CHANGES = new Set<UserCommand>(['update', 'deactivate', 'restore', 'login-url', 'anonymise', 'make-known']);

export interface ActionOptions {
  client: PerksClient;
  clientId: number;
  outDir: string;
  group?: number;
  address: Address;
  dryRun?: boolean;
  /** Ask the platform even when the local state shows the lifecycle forbids it. */
  force?: boolean;
  /** Fields to set (update, make-known), by the body's own field names. */
  set?: Record<string, string>;
  keepUid?: boolean;
  getLogin?: boolean;
  from?: string;
  to?: string;
}

export interface ActionResult {
  command: UserCommand | 'create';
  operation: OperationName;
  identifier: Address['identifier'];
  dryRun: boolean;
  /** The state the output directory knows, when it knows one. */
  local?: LocalView;
  /** What the platform answered (decoded), or what would be sent on a dry run. */
  answer?: Record<string, unknown>;
  forgot?: Pick<ForgetResult, 'files' | 'rows' | 'quarantineLines'>;
}

export async function runUserCommand(command: UserCommand, o: ActionOptions): Promise<ActionResult> {
  const operation = OPERATION[command];
  const result: ActionResult = { command, operation, identifier: o.address.identifier, dryRun: !!o.dryRun };
  const body = bodyFor(command, o);
  let local: LocalUser | undefined;
  if (CHANGES.has(command)) {
    local = await localUser(o.outDir, o.address, o.group);
    if (local?.state) result.local = { id: local.id, state: local.state, source: local.source };
    if (command in TRANSITIONS && !o.force) checkTransition(command as Transition, local);
  }
  if (o.dryRun) {
    result.answer = {
      would_send: `${operations[operation].method} ${operations[operation].path}`,
      fields: Object.keys(body ?? {}),
    };
    return result;
  }
  if (command === 'update' && body && !('email' in body)) body.email = await currentEmail(o);
  const actor = { client_id: o.clientId, operator: operator() };
  const basis = local ? local.basis : await snapshotBasis(o.outDir, o.group);
  // The audit names the user by platform id: answers without one (deactivate, restore, login URL) need it looked up once.
  let knownId = o.address.identifier === 'id' ? Number(o.address.value) : local?.id;
  if (knownId === undefined && (command === 'deactivate' || command === 'restore' || command === 'login-url'))
    knownId = await idOf(o);
  let data: unknown;
  try {
    data = await o.client.call(
      operation,
      { group: o.group, path: pathOf(o.address), body: body as never },
      { retries: CHANGES.has(command) ? 2 : undefined },
    );
  } catch (err) {
    if (!(err instanceof ApiError) || err.transient || err.kind === 'authentication' || err.status === undefined)
      throw err;
    if (CHANGES.has(command))
      await appendAudit(o.outDir, {
        actor,
        command,
        operation,
        group: o.group,
        user_id: knownId,
        outcome: 'rejected',
        answer: { status: err.status, message: err.message },
        basis,
      });
    if (err.status === 404)
      throw new UsersInputError(
        `${command}: the platform has no user with that ${o.address.identifier}${o.group === undefined ? '' : ` in group ${o.group}`} (404): check the address and --group`,
      );
    throw new UserFacingError(`${command} refused by the platform: ${err.message}`, ExitCode.partial, { cause: err });
  }
  const answer = (data && typeof data === 'object' && !Array.isArray(data) ? data : {}) as Record<string, unknown>;
  const userId = typeof answer.id === 'number' ? answer.id : knownId;
  if (CHANGES.has(command)) {
    const to = command in TRANSITIONS ? TRANSITIONS[command as Transition].to : undefined;
    await appendAudit(o.outDir, {
      actor,
      command,
      operation,
      group: o.group,
      user_id: userId,
      outcome: 'ok',
      answer: { message: 'accepted', ...(typeof answer.status === 'string' ? { user_status: answer.status } : {}) },
      ...(to ? { state_after: to } : {}),
      basis,
    });
  }
  result.answer = answer;
  if (command === 'anonymise') {
    if (userId === undefined)
      throw new UserFacingError(
        'anonymise: the platform did not answer with the user id; forget the user locally with `perks forget --user <id>`',
        ExitCode.partial,
      );
    const forgot = await forgetUsers(o.outDir, [userId]).catch((err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      const code = err instanceof UserFacingError ? err.exitCode : ExitCode.failed;
      throw new UserFacingError(
        `anonymise: user ${userId} is anonymised upstream, but forgetting it in ${o.outDir} failed (${why}); run \`perks forget --user ${userId}\` once that is fixed`,
        code,
        { cause: err },
      );
    });
    result.forgot = { files: forgot.files, rows: forgot.rows, quarantineLines: forgot.quarantineLines };
  }
  return result;
}

const SETTABLE: Partial<Record<UserCommand, readonly string[]>> = {
  update: ['email', 'UID', 'first_name', 'last_name', 'company_name', 'phone'],
  'make-known': [
    'email',
    'UID',
    'first_name',
    'last_name',
    'company_name',
    'billing_phone',
    'billing_email',
    'billing_address_line_1',
    'billing_address_line_2',
    'billing_postcode',
    'billing_county',
    'billing_country',
  ],
};

/** The request body from the flags, checked with the operation's own declaration. */
function bodyFor(command: UserCommand, o: ActionOptions): Record<string, unknown> | undefined {
  const settable = SETTABLE[command];
  const set = o.set ?? {};
  if (!settable && Object.keys(set).length)
    throw new UsersInputError(`--set is for update and make-known only, not ${command}`);
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(set)) {
    const field = settable!.find((s) => s.toLowerCase() === k.toLowerCase());
    if (!field)
      throw new UsersInputError(`--set ${k}=… is not a field of ${command}; the fields are ${settable!.join(', ')}`);
    body[field] = v;
  }
  if (command === 'update' && !Object.keys(body).length)
    throw new UsersInputError('update: name what to change, e.g. --set first_name=Ada (repeatable)');
  if (command === 'make-known') {
    if (body.email === undefined)
      throw new UsersInputError(
        'make-known: the e-mail to make the user known under is required: --set email=<address>',
      );
    if (o.getLogin) body.get_login = true;
  }
  if (command === 'anonymise') body.maintain_uid = o.keepUid === true;
  if (command === 'stats') {
    if (o.from !== undefined) body.redemption_created_from = o.from;
    if (o.to !== undefined) body.redemption_created_to = o.to;
  }
  if (!Object.keys(body).length) return undefined;
  const schema = operations[OPERATION[command]].body;
  const probe = schema.safeParse({
    ...(command === 'update' && body.email === undefined ? { email: 'probe@example.com' } : {}),
    ...body,
  });
  if (!probe.success) {
    const issue = probe.error.issues[0];
    const field = issue.path.join('.');
    const flag = command === 'stats' ? (field.endsWith('_from') ? '--from' : '--to') : `--set ${field}`;
    throw new UsersInputError(
      `${flag} is invalid: ${field === 'email' ? 'expected an e-mail address' : issue.message}`,
    );
  }
  return body;
}

/** The platform id of the addressed user (a 404 is the platform's answer: no such user). */
async function idOf(o: ActionOptions): Promise<number> {
  try {
    return (await o.client.call('getUser', { group: o.group, path: pathOf(o.address) })).id;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      throw new UsersInputError(
        `the platform has no user with that ${o.address.identifier}${o.group === undefined ? '' : ` in group ${o.group}`} (404): check the address and --group`,
      );
    throw err;
  }
}

/** update sends the e-mail every time (the spec requires it): the current one when none is given. */
async function currentEmail(o: ActionOptions): Promise<string> {
  if (o.address.identifier === 'email') return o.address.value;
  const user = await o.client.call('getUser', { group: o.group, path: pathOf(o.address) });
  if (!user.email)
    throw new UserFacingError(
      'update: the user has no e-mail on the platform (anonymised?): make the user known first, or give one with --set email=…',
      ExitCode.partial,
    );
  return user.email;
}
