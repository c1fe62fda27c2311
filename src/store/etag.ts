/**
 * ETags as `If-Match` takes them. S3 returns an ETag in quotes (`"abc"`); AWS S3, MinIO and R2 take it back
 * so in `If-Match`, Ceph RGW 16 (and DigitalOcean Spaces, by reports) only bare (`abc`): probe.ts learns which.
 */

/** How `If-Match` takes an ETag: as the service returns it, in quotes (`"abc"`), or without them (`abc`). */
export type IfMatchForm = 'quoted' | 'unquoted';

/** The ETag in the form `If-Match` takes on the service (`"…"` or bare; a weak `W/` prefix dropped). */
export function etagIn(form: IfMatchForm, etag: string): string {
  const bare = etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
  return form === 'quoted' ? `"${bare}"` : bare;
}

/** The same object version, whichever form the ETags are in. */
export const sameEtag = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && etagIn('unquoted', a) === etagIn('unquoted', b);
