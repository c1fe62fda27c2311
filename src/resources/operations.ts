/**
 * Every operation of the spec, declared once: method, path, body and response payload.
 * The client builds its calls from this table and the sandbox routes by it.
 */
import { z } from 'zod';
import { TokenPayload, TokenRequest } from './auth.js';
import { CreditBody, DEFAULT_CREDIT_PATH, UserCredit } from './credit.js';
import { Group, GroupRequest } from './group.js';
import { CreateInteractionBody, Interaction, InteractionsListBody } from './interaction.js';
import { Offer, OfferGetBody, OfferListItem, OffersListBody } from './offer.js';
import { Order, OrdersBody } from './order.js';
import { RedemptionStatsBody, RedemptionStatsItem, UserStats, UserStatsBody } from './redemption-stats.js';
import {
  AnonymiseBody,
  BulkCreateUsersBody,
  CreateLoginUrlBody,
  CreateUserBody,
  GroupScopedBody,
  KnownUser,
  LoginUrl,
  MakeKnownBody,
  User,
  UserListBody,
  UserListItem,
  UserPayload,
} from './user.js';

export type Method = 'POST' | 'DELETE';

export interface Operation<B extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  method: Method;
  /** Path template; {identifier}, {identifier_value} and {id} are filled from path params. */
  path: string;
  body: B;
  /** Schema of `data` (or of the whole body for the token). */
  data: R;
  /** A listing: `data` is an array of this item schema, pages follow. */
  item?: z.ZodType;
  /** The body accepts organisation_group_id (required with an organisation-level token). */
  groupScoped: boolean;
  /** Needs the bearer token. */
  auth: boolean;
}

function op<B extends z.ZodType, R extends z.ZodType>(o: Operation<B, R>): Operation<B, R> {
  return o;
}
const list = <B extends z.ZodType, I extends z.ZodType>(
  method: Method,
  path: string,
  body: B,
  item: I,
  groupScoped = true,
) => ({
  ...op({ method, path, body, data: z.array(item), groupScoped, auth: true }),
  item,
});

const USER = '{identifier}/{identifier_value}';
const Empty = z.unknown();

export const operations = {
  token: op({
    method: 'POST',
    path: '/v3/oauth/token',
    body: TokenRequest,
    data: TokenPayload,
    groupScoped: false,
    auth: false,
  }),
  createUser: op({
    method: 'POST',
    path: '/v3/user/create',
    body: CreateUserBody,
    data: UserPayload,
    groupScoped: true,
    auth: true,
  }),
  bulkCreateUsers: op({
    method: 'POST',
    path: '/v3/user/create/bulk',
    body: BulkCreateUsersBody,
    data: Empty,
    groupScoped: true,
    auth: true,
  }),
  getUser: op({
    method: 'POST',
    path: `/v3/user/get/${USER}`,
    body: GroupScopedBody,
    data: UserPayload,
    groupScoped: true,
    auth: true,
  }),
  listUsers: list('POST', '/v3/user/list', UserListBody, UserListItem),
  updateUser: op({
    method: 'POST',
    path: `/v3/user/update/${USER}`,
    body: CreateUserBody,
    data: UserPayload.or(Empty),
    groupScoped: true,
    auth: true,
  }),
  deactivateUser: op({
    method: 'DELETE',
    path: `/v3/user/delete/${USER}`,
    body: GroupScopedBody,
    data: Empty,
    groupScoped: true,
    auth: true,
  }),
  restoreUser: op({
    method: 'POST',
    path: `/v3/user/restore/${USER}`,
    body: GroupScopedBody,
    data: Empty,
    groupScoped: true,
    auth: true,
  }),
  loginUrl: op({
    method: 'POST',
    path: `/v3/user/login-url/${USER}`,
    body: GroupScopedBody,
    data: LoginUrl,
    groupScoped: true,
    auth: true,
  }),
  createUserWithLoginUrl: op({
    method: 'POST',
    path: '/v3/user/create/login-url',
    body: CreateLoginUrlBody,
    data: LoginUrl,
    groupScoped: true,
    auth: true,
  }),
  anonymiseUser: op({
    method: 'POST',
    path: `/v3/user/anonymise/${USER}`,
    body: AnonymiseBody,
    data: User,
    groupScoped: true,
    auth: true,
  }),
  makeKnownUser: op({
    method: 'POST',
    path: `/v3/user/make-known/${USER}`,
    body: MakeKnownBody,
    data: KnownUser,
    groupScoped: true,
    auth: true,
  }),
  redemptionStats: list('POST', '/v3/users/redemption-stats', RedemptionStatsBody, RedemptionStatsItem),
  userStats: op({
    method: 'POST',
    path: `/v3/user/stats/${USER}`,
    body: UserStatsBody,
    data: UserStats,
    groupScoped: true,
    auth: true,
  }),
  getGroup: op({ method: 'POST', path: '/v3/group', body: GroupRequest, data: Group, groupScoped: true, auth: true }),
  listGroups: list('POST', '/v3/group/list', z.object({}), Group, false),
  getOffer: op({
    method: 'POST',
    path: '/v3/offers/get/{id}',
    body: OfferGetBody,
    data: Offer,
    groupScoped: false,
    auth: true,
  }),
  listOffers: list('POST', '/v3/offers/list', OffersListBody, OfferListItem, false),
  listOrders: list('POST', '/v3/orders', OrdersBody, Order),
  listUserOrders: list('POST', `/v3/orders/${USER}`, OrdersBody, Order),
  listInteractions: list('POST', `/v3/Interactions/list/${USER}`, InteractionsListBody, Interaction),
  createInteraction: op({
    method: 'POST',
    path: `/v3/Interactions/${USER}`,
    body: CreateInteractionBody,
    data: Empty,
    groupScoped: true,
    auth: true,
  }),
  /** Path not shown in the spec: configurable (PERKS_CREDIT_PATH). Its data is one object whose `credits` pages. */
  userCredit: op({
    method: 'POST',
    path: DEFAULT_CREDIT_PATH,
    body: CreditBody,
    data: UserCredit,
    groupScoped: true,
    auth: true,
  }),
} as const;

export type Operations = typeof operations;
export type OperationName = keyof Operations;
export type BodyOf<N extends OperationName> = z.input<Operations[N]['body']>;
export type DataOf<N extends OperationName> = z.output<Operations[N]['data']>;
