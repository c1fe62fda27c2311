import { z } from 'zod';
import { int, timestamp } from './codecs.js';
import { pageRequest } from './envelope.js';

/** The identifier kinds of user paths: /v3/user/…/{identifier}/{identifier_value}. */
export const Identifier = z.enum(['id', 'email', 'UID']);
export type Identifier = z.infer<typeof Identifier>;

/** A user as single-user operations return it (spec: User). Personal fields are null once anonymised. */
export const User = z.looseObject({
  id: int,
  UID: z.string().nullish(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  email: z.string().nullish(),
  status: z.string().nullish(),
  created_at: timestamp.nullish(),
});
export type User = z.infer<typeof User>;

/** A user list item: the single-user fields plus the list-only ones. */
export const UserListItem = User.extend({
  alt_uid: z.string().nullish(),
  last_login: timestamp.nullish(),
  login_count: int.nullish(),
  updated_at: timestamp.nullish(),
  deleted_at: timestamp.nullish(),
});
export type UserListItem = z.infer<typeof UserListItem>;

/** Responses carry the user as `data` or as `data.user`; both decode to a User. */
export const UserPayload = z.union([z.looseObject({ user: User }).transform((d) => d.user), User]);

export const UserMeta = z.looseObject({ sales: int.nullish(), location: z.string().nullish() });

/** Body of create, update and the create part of create-with-login-url. */
export const CreateUserBody = z.object({
  email: z.email(),
  organisation_group_id: z.int().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  company_name: z.string().optional(),
  UID: z.string().optional(),
  meta: UserMeta.optional(),
  send_activation_email: z.boolean().optional(),
  send_activation_sms: z.boolean().optional(),
  phone: z.string().optional(),
});
export type CreateUserBody = z.infer<typeof CreateUserBody>;

export const BulkCreateUsersBody = z.object({
  send_activation_email: z.boolean().optional(),
  organisation_group_id: z.int().optional(),
  data: z.array(CreateUserBody).min(1).max(100),
});
export type BulkCreateUsersBody = z.infer<typeof BulkCreateUsersBody>;

/** Body of single-user operations that need nothing but the group. */
export const GroupScopedBody = z.object({ organisation_group_id: z.int().optional() });
export type GroupScopedBody = z.infer<typeof GroupScopedBody>;

/** User list body: not shown in the spec; paging and the group are the plausible fields. */
export const UserListBody = z.object({ ...pageRequest, organisation_group_id: z.int().optional() });
export type UserListBody = z.infer<typeof UserListBody>;

export const CreateLoginUrlBody = CreateUserBody.extend({ return_user_details: z.boolean().optional() });
export type CreateLoginUrlBody = z.infer<typeof CreateLoginUrlBody>;

export const LoginUrl = z.looseObject({ login_url: z.string(), user: User.optional() });
export type LoginUrl = z.infer<typeof LoginUrl>;

export const AnonymiseBody = z.object({
  maintain_uid: z.boolean().optional(),
  organisation_group_id: z.int().optional(),
});
export type AnonymiseBody = z.infer<typeof AnonymiseBody>;

export const MakeKnownBody = z.object({
  email: z.email(),
  organisation_group_id: z.int().optional(),
  UID: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  company_name: z.string().optional(),
  billing_phone: z.string().optional(),
  billing_email: z.string().optional(),
  billing_address_line_1: z.string().optional(),
  billing_address_line_2: z.string().optional(),
  billing_postcode: z.string().optional(),
  billing_county: z.string().optional(),
  billing_country: z.string().optional(),
  get_login: z.boolean().optional(),
});
export type MakeKnownBody = z.infer<typeof MakeKnownBody>;

export const KnownUser = User.extend({ login_url: z.string().optional() });
export type KnownUser = z.infer<typeof KnownUser>;
