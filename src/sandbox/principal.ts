/** Who an API call is made for: the client its token was issued to (http/auth.ts) and the groups it may act in (ops/). */
export interface Principal {
  clientId: number;
  kind: 'group' | 'organisation';
  groupIds: number[];
  /** The token's id: its uses are counted, and it is revoked, by this id. */
  jti: string;
}
