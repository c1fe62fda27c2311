/** The user lifecycle of the spec's table: deactivate, restore, anonymise, make known. */
import { z } from 'zod';
import type { AnonymiseBody, MakeKnownBody } from '../../resources/user.js';
import { KnownUser, User } from '../../resources/user.js';
import { USER_STATUS } from '../choices.js';
import { isoMicro } from '../clock.js';
import { anonymisedFields, type UserRecord } from '../world/users.js';
import { pathUser, type OpHandler } from './context.js';
import { duplicate, requireActive, wrongState } from './users.js';
import { userWire } from './wire.js';

const BILLING = [
  'billing_phone',
  'billing_email',
  'billing_address_line_1',
  'billing_address_line_2',
  'billing_postcode',
  'billing_county',
  'billing_country',
] as const;

/** The fields anonymise and make-known answer with (no status, as the spec lists them). */
const identity = (u: UserRecord) => ({
  id: u.id,
  UID: u.UID,
  first_name: u.first_name,
  last_name: u.last_name,
  email: u.email,
  created_at: isoMicro(u.created_at),
});

export const lifecycleHandlers = {
  deactivateUser: (ctx) => {
    const user = pathUser(ctx);
    requireActive(user);
    const now = ctx.world.now();
    ctx.world.users.update(user, { status: USER_STATUS.deactivated, deleted_at: now, updated_at: now });
    return { data: [] };
  },

  restoreUser: (ctx) => {
    const user = pathUser(ctx);
    if (user.status !== USER_STATUS.deactivated)
      throw wrongState(`Only a deactivated user can be restored; the user is ${user.status.toLowerCase()}.`);
    ctx.world.users.update(user, { status: USER_STATUS.active, deleted_at: null, updated_at: ctx.world.now() });
    return { data: { user: userWire(user) } };
  },

  anonymiseUser: (ctx) => {
    const user = pathUser(ctx);
    if (user.status === USER_STATUS.anonymised) throw wrongState('The user is already anonymised.');
    const body = ctx.body as AnonymiseBody;
    ctx.world.users.update(user, anonymisedFields(user, ctx.world.now(), body.maintain_uid ?? true));
    return { data: z.encode(User, identity(user)) };
  },

  makeKnownUser: (ctx) => {
    const user = pathUser(ctx);
    if (user.status !== USER_STATUS.anonymised)
      throw wrongState(`Only an anonymised user can be made known; the user is ${user.status.toLowerCase()}.`);
    const body = ctx.body as MakeKnownBody;
    const dup = ctx.world.users.existing(ctx.group.id, body.email, body.UID, user);
    if (dup) throw duplicate(dup.field);
    const billing = Object.fromEntries(BILLING.flatMap((k) => (body[k] === undefined ? [] : [[k, body[k]]])));
    ctx.world.users.update(user, {
      email: body.email,
      UID: body.UID ?? user.UID,
      first_name: body.first_name ?? null,
      last_name: body.last_name ?? null,
      company_name: body.company_name ?? null,
      billing: Object.keys(billing).length ? billing : null,
      status: USER_STATUS.active,
      deleted_at: null,
      updated_at: ctx.world.now(),
    });
    const loginUrl = body.get_login ? { login_url: ctx.state.logins.issue(user, ctx.origin) } : {};
    return { data: z.encode(KnownUser, { ...identity(user), ...loginUrl }) };
  },
} satisfies Record<string, OpHandler>;
