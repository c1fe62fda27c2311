/** What an operation handler gets, and the helpers every handler shares (user lookup, pages). */
import type { OperationName } from '../../resources/operations.js';
import { Identifier } from '../../resources/user.js';
import { fieldError } from '../errors.js';
import type { JsonList } from '../json/written-json.js';
import type { ResolvedOptions } from '../options.js';
import type { Principal } from '../principal.js';
import { requireUser } from '../world/directory.js';
import type { GroupRecord } from '../world/groups.js';
import type { UserRecord } from '../world/users.js';
import type { World } from '../world/world.js';
import type { LoginUrls } from './login-urls.js';
import { pageOf, type Page, type PagingBody } from './pagination.js';

export interface SandboxState {
  world: World;
  options: ResolvedOptions;
  logins: LoginUrls;
  /** Work deferred to after the response (bulk create); cleared on close. */
  later(fn: () => void): void;
}

export interface OpContext {
  state: SandboxState;
  world: World;
  name: OperationName;
  params: Record<string, string>;
  /** The validated, decoded body: each operation reads it as its own body type (resources/operations.ts). */
  body: unknown;
  principal: Principal;
  /** The group the request concerns (the token's, or organisation_group_id). */
  group: GroupRecord;
  /** Origin of the request, e.g. http://127.0.0.1:4000. */
  origin: string;
  /** Full URL of the path, without query: Laravel's pagination `path`. */
  pathUrl: string;
}

export interface OpResult {
  status?: number;
  data: unknown;
  page?: Page['fields'];
}

export type OpHandler = (ctx: OpContext) => OpResult | Promise<OpResult>;

/** The user named by the path's {identifier}/{identifier_value} in the request's group, or 404. */
export function pathUser(ctx: OpContext): UserRecord {
  const identifier = Identifier.safeParse(ctx.params.identifier);
  if (!identifier.success)
    throw fieldError(
      'identifier',
      `The selected identifier is invalid; expected one of: ${Identifier.options.join(', ')}.`,
    );
  const value = ctx.params.identifier_value;
  if (identifier.data === 'id' && !/^\d+$/.test(value))
    throw fieldError('identifier_value', 'The identifier_value must be an integer when identifier is id.');
  return requireUser(ctx.world.users, ctx.group.id, identifier.data, value);
}

/** One page of an ordered list, each item encoded with its resource schema. */
export function paged<T>(
  ctx: OpContext,
  items: { length: number; slice(start: number, end: number): ArrayLike<T> },
  encodeItem: (item: T) => unknown,
): OpResult {
  const page = pageOf(items.length, ctx.body as PagingBody, ctx.pathUrl);
  return { data: Array.from(items.slice(page.start, page.end), (item) => encodeItem(item)), page: page.fields };
}

/** One page of an ordered list whose items are written straight to JSON (see json/written-json.ts). */
export function pagedJson<T>(
  ctx: OpContext,
  items: { length: number; slice(start: number, end: number): ArrayLike<T> },
  write: (page: ArrayLike<T>) => JsonList,
): OpResult {
  const page = pageOf(items.length, ctx.body as PagingBody, ctx.pathUrl);
  return { data: write(items.slice(page.start, page.end)), page: page.fields };
}

/** bareListings: the spec leaves the pagination fields of the user list and orders unclear; this drops them. */
export function maybeBare(ctx: OpContext, result: OpResult): OpResult {
  return ctx.state.options.bareListings ? { data: result.data } : result;
}
