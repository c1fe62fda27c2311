/** User operations: create (single, bulk, with login URL), get, list, update, login URL. */
import type { CreateLoginUrlBody, CreateUserBody } from '../../resources/user.js';
import { DUPLICATE_USER_STATUS, USER_STATUS, WRONG_STATE_STATUS } from '../choices.js';
import { SandboxError, validationError } from '../errors.js';
import type { UserRecord } from '../world/users.js';
import { maybeBare, paged, pathUser, type OpContext, type OpHandler } from './context.js';
import { userListWire, userWire } from './wire.js';

export function duplicate(field: string): SandboxError {
  const message = `The ${field} has already been taken.`;
  return new SandboxError('duplicate', DUPLICATE_USER_STATUS, message, { [field]: [message] });
}

export function wrongState(message: string): SandboxError {
  return new SandboxError('wrong_state', WRONG_STATE_STATUS, message);
}

/** Field rules beyond the body schema (Laravel's required_if). */
function checkCreate(body: CreateUserBody, prefix = ''): Record<string, string[]> {
  return body.send_activation_sms && !body.phone
    ? { [`${prefix}phone`]: [`The ${prefix}phone field is required when send_activation_sms is true.`] }
    : {};
}

function insert(ctx: OpContext, body: CreateUserBody): UserRecord {
  const now = ctx.world.now();
  const user: UserRecord = {
    id: ctx.world.users.nextId(),
    groupId: ctx.group.id,
    UID: body.UID ?? null,
    alt_uid: null,
    first_name: body.first_name ?? null,
    last_name: body.last_name ?? null,
    company_name: body.company_name ?? null,
    email: body.email,
    phone: body.phone ?? null,
    status: USER_STATUS.active,
    last_login: null,
    login_count: 0,
    created_at: now,
    updated_at: now,
    deleted_at: null,
    meta: body.meta ?? null,
    billing: null,
  };
  ctx.world.users.add(user);
  return user;
}

function createChecked(ctx: OpContext, body: CreateUserBody): UserRecord {
  const errors = checkCreate(body);
  if (Object.keys(errors).length) throw validationError(errors);
  const dup = ctx.world.users.existing(ctx.group.id, body.email, body.UID);
  if (dup) throw duplicate(dup.field);
  return insert(ctx, body);
}

export function requireActive(user: UserRecord): void {
  if (user.status !== USER_STATUS.active) throw wrongState(`The user is ${user.status.toLowerCase()}.`);
}

export const userHandlers = {
  createUser: (ctx) => ({ data: { user: userWire(createChecked(ctx, ctx.body as CreateUserBody)) } }),

  /** 202 now; the users are created after the response. A user that exists by then is skipped, as the spec rejects it. */
  bulkCreateUsers: (ctx) => {
    const items = (ctx.body as { data: CreateUserBody[] }).data;
    const errors = Object.assign({}, ...items.map((item, i) => checkCreate(item, `data.${i}.`))) as Record<
      string,
      string[]
    >;
    if (Object.keys(errors).length) throw validationError(errors);
    ctx.state.later(() => {
      for (const item of items) if (!ctx.world.users.existing(ctx.group.id, item.email, item.UID)) insert(ctx, item);
    });
    return { status: 202, data: [] };
  },

  getUser: (ctx) => ({ data: { user: userWire(pathUser(ctx)) } }),

  listUsers: (ctx) => maybeBare(ctx, paged(ctx, ctx.world.users.inGroup(ctx.group.id), userListWire)),

  updateUser: (ctx) => {
    const user = pathUser(ctx);
    if (user.status === USER_STATUS.anonymised) throw wrongState('The user is anonymised; make the user known first.');
    const body = ctx.body as CreateUserBody;
    const errors = checkCreate(body);
    if (Object.keys(errors).length) throw validationError(errors);
    const dup = ctx.world.users.existing(ctx.group.id, body.email, body.UID, user);
    if (dup) throw duplicate(dup.field);
    const { email, UID, first_name, last_name, company_name, phone, meta } = body;
    const change = Object.fromEntries(
      Object.entries({ email, UID, first_name, last_name, company_name, phone, meta }).filter(
        ([, v]) => v !== undefined,
      ),
    );
    ctx.world.users.update(user, { ...change, updated_at: ctx.world.now() });
    return { data: { user: userWire(user) } };
  },

  loginUrl: (ctx) => {
    const user = pathUser(ctx);
    requireActive(user);
    return { data: { login_url: ctx.state.logins.issue(user, ctx.origin) } };
  },

  createUserWithLoginUrl: (ctx) => {
    const body = ctx.body as CreateLoginUrlBody;
    const user = createChecked(ctx, body);
    const login_url = ctx.state.logins.issue(user, ctx.origin);
    return { data: body.return_user_details ? { login_url, user: userWire(user) } : { login_url } };
  },
} satisfies Record<string, OpHandler>;
