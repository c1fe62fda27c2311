import { z } from 'zod';
import { int } from './codecs.js';

export const TokenRequest = z.object({
  client_id: z.int(),
  client_secret: z.string().min(1),
  grant_type: z.literal('client_credentials'),
  scope: z.string().min(1),
});
export type TokenRequest = z.infer<typeof TokenRequest>;

export const Token = z.looseObject({ token_type: z.string(), expires_in: int, access_token: z.string() });
export type Token = z.infer<typeof Token>;

/** The token response is accepted with or without the envelope. */
export const TokenPayload = z.union([z.looseObject({ data: Token }).transform((d) => d.data), Token]);
