/**
 * `perks users create`: one user, optionally with a single-use login URL (create user with login URL).
 * Sent once (a create repeated after a lost answer would be refused as a duplicate of itself), audited.
 */
import type { PerksClient } from '../api/index.js';
import type { Output } from '../output/index.js';
import { CreateLoginUrlBody, type User } from '../resources/user.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { setFields, wouldSend, type ActionResult } from './actions.js';
import { auditCall, auditScope } from './audit.js';
import { isRefusal, UsersInputError } from './errors.js';
import { snapshotBasis } from './local-state.js';

export interface CreateOptions {
  client: PerksClient;
  clientId: number;
  /** Where the command writes (the command's Output): the audit log, and the lake a forget rewrites. */
  output: Output;
  group?: number;
  set: Record<string, string>;
  loginUrl?: boolean;
  sendActivationEmail?: boolean;
  dryRun?: boolean;
}

const FIELDS = ['email', 'UID', 'first_name', 'last_name', 'company_name', 'phone'] as const;

export async function createOneUser(o: CreateOptions): Promise<ActionResult> {
  const { body, checked } = createBody(o);
  const operation = o.loginUrl ? 'createUserWithLoginUrl' : 'createUser';
  const result: ActionResult = { command: 'create', operation, identifier: 'email', dryRun: !!o.dryRun };
  if (o.dryRun) {
    result.answer = wouldSend(operation, body);
    return result;
  }
  const audit = auditScope(o, 'create', await snapshotBasis(o.output.dir, o.group));
  try {
    const { user, loginUrl } = await create(o, checked);
    await auditCall(audit, {
      operation,
      user_id: user?.id,
      outcome: 'ok',
      answer: { message: 'accepted', user_status: user?.status ?? null },
      state_after: 'active',
    });
    result.answer = { ...(user ?? {}), ...(loginUrl === undefined ? {} : { login_url: loginUrl }) };
    return result;
  } catch (err) {
    if (!isRefusal(err) || err.status === undefined) throw err;
    await auditCall(audit, { operation, outcome: 'rejected', answer: { status: err.status, message: err.message } });
    throw new UserFacingError(`create refused by the platform: ${err.message}`, ExitCode.partial, { cause: err });
  }
}

/** The body from --set and the flags, checked with the operation's declaration (`body` as given, for a dry run). */
function createBody(o: CreateOptions): { body: Record<string, unknown>; checked: CreateLoginUrlBody } {
  const body = setFields('create', FIELDS, o.set);
  if (body.email === undefined) throw new UsersInputError('create: the e-mail is required: --set email=<address>');
  if (o.sendActivationEmail !== undefined) body.send_activation_email = o.sendActivationEmail;
  if (o.loginUrl) body.return_user_details = true;
  const checked = CreateLoginUrlBody.safeParse(body);
  if (checked.success) return { body, checked: checked.data };
  const issue = checked.error.issues[0];
  throw new UsersInputError(
    `--set ${issue.path.join('.')} is invalid: ${issue.path[0] === 'email' ? 'expected an e-mail address' : issue.message}`,
  );
}

/** Sent once: a create repeated after a lost answer would be refused as a duplicate of itself. */
async function create(o: CreateOptions, body: CreateLoginUrlBody): Promise<{ user?: User; loginUrl?: string }> {
  if (!o.loginUrl) return { user: await o.client.call('createUser', { group: o.group, body }, { retries: 0 }) };
  const answer = await o.client.call('createUserWithLoginUrl', { group: o.group, body }, { retries: 0 });
  return { user: answer.user, loginUrl: answer.login_url };
}
