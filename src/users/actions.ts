/**
 * The single-user commands: get, update, deactivate, restore, login-url, anonymise, make-known, stats.
 * Each checks its input, refuses what the lifecycle forbids from the local state (before any call;
 * --force asks the platform anyway), makes one call through the client (update without a new e-mail
 * reads the current one first), audits every state-changing call with the platform's answer, and
 * returns what happened as data. Anonymise also forgets the user in the output directory.
 */
import { ApiError, type PerksClient } from '../api/index.js';
import type { Output } from '../output/index.js';
import { forgetUsers, type ForgetResult } from '../forget/index.js';
import { operations, type OperationName } from '../resources/operations.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { auditCall, auditScope, type AuditScope } from './audit.js';
import { pathOf, type Address } from './address.js';
import { isRefusal, UsersInputError } from './errors.js';
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
  /** Where the command writes (the command's Output): the audit log, and the lake a forget rewrites. */
  output: Output;
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
  const local = CHANGES.has(command) ? await allowedFromLocalState(command, o) : undefined;
  if (local?.state) result.local = { id: local.id, state: local.state, source: local.source };
  if (o.dryRun) {
    result.answer = wouldSend(operation, body);
    return result;
  }
  if (command === 'update' && body && !('email' in body)) body.email = await currentEmail(o);
  const audit = auditScope(o, command, local ? local.basis : await snapshotBasis(o.output.dir, o.group));
  const knownId = await idForAudit(command, o, local);
  const answer = await send(command, o, body, { audit, knownId });
  const userId = typeof answer.id === 'number' ? answer.id : knownId;
  if (CHANGES.has(command)) await auditAccepted(command, audit, userId, answer);
  result.answer = answer;
  if (command === 'anonymise') result.forgot = await forgetAnonymised(o.output, userId);
  return result;
}

/** What a dry run says it would send: the request line and the body's fields, never their values. */
export function wouldSend(
  operation: OperationName,
  body: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return {
    would_send: `${operations[operation].method} ${operations[operation].path}`,
    fields: Object.keys(body ?? {}),
  };
}

/** The user as the output directory knows it; throws when the lifecycle forbids the command from there (unless --force). */
async function allowedFromLocalState(command: UserCommand, o: ActionOptions): Promise<LocalUser | undefined> {
  const local = await localUser(o.output.dir, o.address, o.group);
  if (command in TRANSITIONS && !o.force) checkTransition(command as Transition, local);
  return local;
}

/**
 * The platform id the audit names the user by: the address's, else the local state's. Deactivate, restore and the
 * login URL answer without one, so for them it is looked up once.
 */
async function idForAudit(
  command: UserCommand,
  o: ActionOptions,
  local: LocalUser | undefined,
): Promise<number | undefined> {
  const id = o.address.identifier === 'id' ? Number(o.address.value) : local?.id;
  if (id === undefined && ANSWERS_WITHOUT_ID.has(command)) return idOf(o);
  return id;
}
const ANSWERS_WITHOUT_ID = new Set<UserCommand>(['deactivate', 'restore', 'login-url']);

/** The one call; a refusal is audited (for commands that change something) and said plainly. */
async function send(
  command: UserCommand,
  o: ActionOptions,
  body: Record<string, unknown> | undefined,
  { audit, knownId }: { audit: AuditScope; knownId: number | undefined },
): Promise<Record<string, unknown>> {
  const operation = OPERATION[command];
  try {
    const data: unknown = await o.client.call(
      operation,
      { group: o.group, path: pathOf(o.address), body: body as never },
      { retries: CHANGES.has(command) ? 2 : undefined },
    );
    return (data && typeof data === 'object' && !Array.isArray(data) ? data : {}) as Record<string, unknown>;
  } catch (err) {
    if (!isRefusal(err) || err.status === undefined) throw err;
    if (CHANGES.has(command))
      await auditCall(audit, {
        operation,
        user_id: knownId,
        outcome: 'rejected',
        answer: { status: err.status, message: err.message },
      });
    if (err.status === 404) throw new UsersInputError(`${command}: ${noSuchUser(o)}`);
    throw new UserFacingError(`${command} refused by the platform: ${err.message}`, ExitCode.partial, { cause: err });
  }
}

/** An accepted change, with the lifecycle state it leads to (the state later commands check). */
async function auditAccepted(
  command: UserCommand,
  audit: AuditScope,
  userId: number | undefined,
  answer: Record<string, unknown>,
): Promise<void> {
  const to = command in TRANSITIONS ? TRANSITIONS[command as Transition].to : undefined;
  await auditCall(audit, {
    operation: OPERATION[command],
    user_id: userId,
    outcome: 'ok',
    answer: { message: 'accepted', ...(typeof answer.status === 'string' ? { user_status: answer.status } : {}) },
    ...(to ? { state_after: to } : {}),
  });
}

/** Anonymised upstream: the user is forgotten in the output directory too, or the error says how to finish. */
async function forgetAnonymised(output: Output, userId: number | undefined): Promise<ActionResult['forgot']> {
  if (userId === undefined)
    throw new UserFacingError(
      'anonymise: the platform did not answer with the user id; forget the user locally with `perks forget --user <id>`',
      ExitCode.partial,
    );
  const forgot = await forgetUsers(output, [userId]).catch((err: unknown) => {
    const why = err instanceof Error ? err.message : String(err);
    const code = err instanceof UserFacingError ? err.exitCode : ExitCode.failed;
    throw new UserFacingError(
      `anonymise: user ${userId} is anonymised upstream, but forgetting it in ${output.dir} failed (${why}); ` +
        `run \`perks forget --user ${userId}\` once that is fixed`,
      code,
      { cause: err },
    );
  });
  return { files: forgot.files, rows: forgot.rows, quarantineLines: forgot.quarantineLines };
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

/** What a command requires of the body, and what its own flags add to it. */
const COMMAND_BODY: Partial<Record<UserCommand, (body: Record<string, unknown>, o: ActionOptions) => void>> = {
  update: (body) => {
    if (!Object.keys(body).length)
      throw new UsersInputError('update: name what to change, e.g. --set first_name=Ada (repeatable)');
  },
  'make-known': (body, o) => {
    if (body.email === undefined)
      throw new UsersInputError(
        'make-known: the e-mail to make the user known under is required: --set email=<address>',
      );
    if (o.getLogin) body.get_login = true;
  },
  anonymise: (body, o) => {
    body.maintain_uid = o.keepUid === true;
  },
  stats: (body, o) => {
    if (o.from !== undefined) body.redemption_created_from = o.from;
    if (o.to !== undefined) body.redemption_created_to = o.to;
  },
};

/** The request body from the flags, checked with the operation's own declaration; none when it is empty. */
function bodyFor(command: UserCommand, o: ActionOptions): Record<string, unknown> | undefined {
  const settable = SETTABLE[command];
  const set = o.set ?? {};
  if (!settable && Object.keys(set).length)
    throw new UsersInputError(`--set is for update and make-known only, not ${command}`);
  const body = settable ? setFields(command, settable, set) : {};
  COMMAND_BODY[command]?.(body, o);
  if (!Object.keys(body).length) return undefined;
  checkBody(command, body);
  return body;
}

/** --set name=value pairs as body fields, the names matched without regard to case. */
export function setFields(
  command: string,
  fields: readonly string[],
  set: Record<string, string>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(set)) {
    const field = fields.find((f) => f.toLowerCase() === k.toLowerCase());
    if (!field)
      throw new UsersInputError(`--set ${k}=… is not a field of ${command}; the fields are ${fields.join(', ')}`);
    body[field] = v;
  }
  return body;
}

/** Refuses a body the operation's schema refuses, naming the flag that set the field. */
function checkBody(command: UserCommand, body: Record<string, unknown>): void {
  const schema = operations[OPERATION[command]].body;
  // update's e-mail is filled in later from the platform when not given: a stand-in lets the rest be checked now
  const probe = schema.safeParse({
    ...(command === 'update' && body.email === undefined ? { email: 'probe@example.com' } : {}),
    ...body,
  });
  if (probe.success) return;
  const issue = probe.error.issues[0];
  const field = issue.path.join('.');
  const flag = command === 'stats' ? (field.endsWith('_from') ? '--from' : '--to') : `--set ${field}`;
  throw new UsersInputError(`${flag} is invalid: ${field === 'email' ? 'expected an e-mail address' : issue.message}`);
}

/** "the platform has no user with that email in group 11 (404): …" */
function noSuchUser(o: ActionOptions): string {
  return (
    `the platform has no user with that ${o.address.identifier}${o.group === undefined ? '' : ` in group ${o.group}`} (404): ` +
    `check the address and --group`
  );
}

/** The platform id of the addressed user (a 404 is the platform's answer: no such user). */
async function idOf(o: ActionOptions): Promise<number> {
  try {
    return (await o.client.call('getUser', { group: o.group, path: pathOf(o.address) })).id;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new UsersInputError(noSuchUser(o));
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
