/**
 * Where the lake holds personal data (names, email addresses, the integrator's alternative id) and
 * how a row is known to be a given user's. docs/assumptions.md (## Personal data) lists the same.
 * Keys (user id, UID) stay: they are what joins and reconciles, and the API keeps the UID too.
 */
export interface PersonalColumns {
  stream: string;
  /** Set to NULL in the rows of a forgotten user. */
  columns: string[];
  /** The row is the user's when this column holds their id… */
  byId?: string;
  /** …or when this column holds one of their email addresses (orders carry no user id)… */
  byEmail?: string;
  /** …or when this column holds the id of one of their orders (found by `byEmail` in `orders` first). */
  byOrderId?: string;
}

/**
 * `_extra` (what a record carried beyond its declaration) is cleared too in every row of the user: an
 * undeclared field may be personal (a phone, an address) and nobody has said yet that it is.
 */
export const PERSONAL_COLUMNS: readonly PersonalColumns[] = [
  { stream: 'users', columns: ['first_name', 'last_name', 'email', 'alt_uid', '_extra'], byId: 'id' },
  // Orders name no user id: the user's emails from every users snapshot find them. An address someone
  // else uses later would have that person's order names and emails cleared too (a known over-reach).
  // Comes before order_versions, which is found by the order ids seen here.
  { stream: 'orders', columns: ['first_name', 'last_name', 'email', '_extra'], byEmail: 'email' },
  { stream: 'order_versions', columns: ['_extra'], byOrderId: 'order_id' },
  { stream: 'redemption_stats', columns: ['email', '_extra'], byId: 'id' },
  { stream: 'credit', columns: ['_extra'], byId: 'user_id' },
  { stream: 'interactions', columns: ['_extra'], byId: 'user_id' },
];

/** Keys of a quarantined record that hold personal values, whichever stream it came from. */
export const PERSONAL_KEYS: readonly string[] = [
  'first_name',
  'last_name',
  'email',
  'alt_uid',
  'company_name',
  'phone',
];
