/**
 * A page of orders written straight to JSON bytes. It is byte for byte JSON.stringify of the orders'
 * orderWire(…) (the Order declaration of src/resources encoded with zod), which test/sandbox/order-json.test.ts
 * checks for every order of a world, before and after the clock moves. Listing a million orders through
 * z.encode, an object and a string per order was most of the sandbox's CPU; this copies parts already encoded.
 * The status (settling, refunds) and the user (renames, anonymisation) can change: the status is read at each
 * call, a user's part is written again when its values are not the ones it was written from. Offers never change.
 */
import { ORDER_STATUSES } from '../choices.js';
import { JsonList } from '../http/json-list.js';
import { ORDER_ID_BASE } from '../world/order-store.js';
import type { World } from '../world/world.js';
import { JsonBytes } from './json-bytes.js';
import { major } from './wire.js';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
/** JSON.stringify of an object, without its braces, as UTF-8. */
const fields = (value: object) => utf8(JSON.stringify(value).slice(1, -1));

const ORDER_ID = utf8('{"order_id":');
const STATUS = ORDER_STATUSES.map((s) => utf8(`,${JSON.stringify({ order_status: s }).slice(1, -1)},`));
const FACE = utf8(',"face_value":');
const PAID = utf8(',"order_total_paid":');
const CREDIT = utf8(',"order_credit":');
const CURRENCY = utf8(',"order_currency":');
const SAVING = utf8(',"order_saving":');
const REVENUE = utf8(',"group_revenue":');

/** A user's `"first_name":…,"last_name":…,"email":…`, kept with the values it was written from. */
interface UserPart {
  first: string | null;
  last: string | null;
  email: string | null;
  bytes: Buffer;
}

const NO_USER = fields({ first_name: null, last_name: null, email: null });

/** The parts of a world's orders that many orders share, each written once. */
class SharedParts {
  /** `"perk_id":…,"brand":…,"offer":…,"offer_excerpt":…` by offer index. */
  readonly offers: Buffer[];
  /** The JSON string of each currency, by the store's currency code. */
  readonly currencies: Buffer[] = [];
  private readonly users: (UserPart | undefined)[] = [];

  constructor(private readonly world: World) {
    this.offers = world.offers.map((o) => fields({ perk_id: o.id, brand: o.brand, offer: o.title, offer_excerpt: o.offer_excerpt }));
  }

  /** Written again when the user's values are not the ones it was written from (renames, anonymisation). */
  user(id: number): Buffer {
    const user = this.world.users.get(id);
    if (!user) return NO_USER;
    const part = this.users[id];
    if (part && part.first === user.first_name && part.last === user.last_name && part.email === user.email) return part.bytes;
    const first = user.first_name ?? null;
    const last = user.last_name ?? null;
    const email = user.email ?? null;
    const bytes = fields({ first_name: first, last_name: last, email });
    this.users[id] = { first, last, email, bytes };
    return bytes;
  }

  currency(i: number): Buffer {
    const code = this.world.orders.currency[i];
    return (this.currencies[code] ??= utf8(JSON.stringify(this.world.orders.currencyOf(i))));
  }
}

const shared = new WeakMap<World, SharedParts>();

/** The orders at these store indexes, as the JSON array the API answers. */
export function ordersJson(world: World, indexes: ArrayLike<number>): JsonList {
  const s = world.orders;
  let parts = shared.get(world);
  if (!parts) shared.set(world, (parts = new SharedParts(world)));
  const out = new JsonBytes(512 * indexes.length + 2);
  out.ascii('[');
  for (let k = 0; k < indexes.length; k++) {
    const i = indexes[k];
    const face = s.face[i];
    const paid = s.paid[i];
    if (k > 0) out.ascii(',');
    out.raw(ORDER_ID);
    out.number(ORDER_ID_BASE + i);
    out.raw(STATUS[s.status[i]]);
    out.raw(parts.user(s.user[i]));
    out.ascii(',');
    out.raw(parts.offers[s.offer[i]]);
    out.raw(FACE);
    out.number(major(face));
    out.raw(PAID);
    out.number(major(paid));
    out.raw(CREDIT);
    out.number(major(s.credit[i]));
    out.raw(CURRENCY);
    out.raw(parts.currency(i));
    out.raw(SAVING);
    out.number(major(face - paid));
    out.raw(REVENUE);
    out.number(major(s.revenue[i]));
    out.ascii('}');
  }
  out.ascii(']');
  return new JsonList(out.bytes());
}
