/**
 * `perks users create`: one user, optionally with a single-use login URL (create user with login URL).
 * Sent once (a create repeated after a lost answer would be refused as a duplicate of itself), audited.
 */
import { ApiError, type PerksClient } from '../api/index.js';
import { operations } from '../resources/operations.js';
import { CreateLoginUrlBody, type User } from '../resources/user.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import type { ActionResult } from './actions.js';
import { appendAudit, operator } from './audit.js';
import { UsersInputError } from './errors.js';
import { snapshotBasis } from './local-state.js';

export interface CreateOptions {
  client: PerksClient;
  clientId: number;
  outDir: string;
  group?: number;
  set: Record<string, string>;
  loginUrl?: boolean;
  sendActivationEmail?: boolean;
  dryRun?: boolean;
}

const FIELDS = ['email', 'UID', 'first_name', 'last_name', 'company_name', 'phone'] as const;

export async function createOneUser(o: CreateOptions): Promise<ActionResult> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o.set)) {
    const field = FIELDS.find((f) => f.toLowerCase() === k.toLowerCase());
    if (!field) throw new UsersInputError(`--set ${k}=… is not a field of create; the fields are ${FIELDS.join(', ')}`);
    body[field] = v;
  }
  if (body.email === undefined) throw new UsersInputError('create: the e-mail is required: --set email=<address>');
  if (o.sendActivationEmail !== undefined) body.send_activation_email = o.sendActivationEmail;
  if (o.loginUrl) body.return_user_details = true;
  const checked = CreateLoginUrlBody.safeParse(body);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new UsersInputError(
      `--set ${issue.path.join('.')} is invalid: ${issue.path[0] === 'email' ? 'expected an e-mail address' : issue.message}`,
    );
  }
  const operation = o.loginUrl ? 'createUserWithLoginUrl' : 'createUser';
  const result: ActionResult = { command: 'create', operation, identifier: 'email', dryRun: !!o.dryRun };
  if (o.dryRun) {
    result.answer = {
      would_send: `${operations[operation].method} ${operations[operation].path}`,
      fields: Object.keys(body),
    };
    return result;
  }
  const actor = { client_id: o.clientId, operator: operator() };
  const basis = await snapshotBasis(o.outDir, o.group);
  try {
    let user: User | undefined;
    let loginUrl: string | undefined;
    if (o.loginUrl) {
      const answer = await o.client.call(
        'createUserWithLoginUrl',
        { group: o.group, body: checked.data },
        { retries: 0 },
      );
      user = answer.user;
      loginUrl = answer.login_url;
    } else {
      user = await o.client.call('createUser', { group: o.group, body: checked.data }, { retries: 0 });
    }
    await appendAudit(o.outDir, {
      actor,
      command: 'create',
      operation,
      group: o.group,
      user_id: user?.id,
      outcome: 'ok',
      answer: { message: 'accepted', user_status: user?.status ?? null },
      state_after: 'active',
      basis,
    });
    result.answer = { ...(user ?? {}), ...(loginUrl === undefined ? {} : { login_url: loginUrl }) };
    return result;
  } catch (err) {
    if (!(err instanceof ApiError) || err.transient || err.kind === 'authentication' || err.status === undefined)
      throw err;
    await appendAudit(o.outDir, {
      actor,
      command: 'create',
      operation,
      group: o.group,
      outcome: 'rejected',
      answer: { status: err.status, message: err.message },
      basis,
    });
    throw new UserFacingError(`create refused by the platform: ${err.message}`, ExitCode.partial, { cause: err });
  }
}
