/**
 * A page of orders written straight to JSON bytes. It is byte for byte JSON.stringify of the orders'
 * orderWire(…) (the Order declaration of src/resources encoded with zod), which test/sandbox/order-json.test.ts
 * checks for every order of a world, before and after the clock moves. Listing a million orders through
 * z.encode, an object and a string per order was most of the sandbox's CPU; this copies parts already encoded
 * and writes the numbers digit by digit.
 * The status (settling, refunds) and the user (renames, anonymisation) can change: the status is read at each
 * call, and users' parts are checked once the user directory has changed (user-parts.ts). Offers never change.
 */
import { ORDER_STATUSES } from '../choices.js';
import { JsonList } from '../json/written-json.js';
import { ORDER_ID_BASE } from '../world/order-store.js';
import type { World } from '../world/world.js';
import { UserParts } from './user-parts.js';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
/** JSON.stringify of an object, without its braces. */
const fields = (value: object) => JSON.stringify(value).slice(1, -1);

// Each part carries the keys around it, so an order is seven copies and six numbers.
const ORDER_ID = utf8('{"order_id":');
const STATUS = ORDER_STATUSES.map((s) => utf8(`,${fields({ order_status: s })},`));
const PAID = utf8(',"order_total_paid":');
const CREDIT = utf8(',"order_credit":');
const REVENUE = utf8(',"group_revenue":');
const CLOSE = 0x7d;

/** The parts of a world's orders that many orders share, each written once. */
class SharedParts {
  /** `"perk_id":…,"brand":…,"offer":…,"offer_excerpt":…,"face_value":` by offer index. */
  readonly offers: Buffer[];
  /** `,"order_currency":…,"order_saving":` by the store's currency code. */
  private readonly currencies: Buffer[] = [];
  readonly users: UserParts;

  constructor(private readonly world: World) {
    this.users = new UserParts(world.users);
    this.offers = world.offers.map((o) =>
      utf8(
        `${fields({ perk_id: o.id, brand: o.brand, offer: o.title, offer_excerpt: o.offer_excerpt })},"face_value":`,
      ),
    );
  }

  currency(i: number): Buffer {
    const code = this.world.orders.currency[i];
    return (this.currencies[code] ??= utf8(
      `,${fields({ order_currency: this.world.orders.currencyOf(i) })},"order_saving":`,
    ));
  }
}

const shared = new WeakMap<World, SharedParts>();

/** The orders at these store indexes, as the JSON array the API answers. */
export function ordersJson(world: World, indexes: ArrayLike<number>): JsonList {
  const s = world.orders;
  let parts = shared.get(world);
  if (!parts) shared.set(world, (parts = new SharedParts(world)));
  const users = parts.users;
  const offers = parts.offers;
  return JsonList.write((out) => {
    out.char(0x5b);
    for (let k = 0; k < indexes.length; k++) {
      const i = indexes[k];
      const face = s.face[i];
      const paid = s.paid[i];
      if (k > 0) out.char(0x2c);
      out.raw(ORDER_ID);
      out.int(ORDER_ID_BASE + i);
      out.raw(STATUS[s.status[i]]);
      users.writeTo(out, s.user[i]);
      out.raw(offers[s.offer[i]]);
      out.cents(face);
      out.raw(PAID);
      out.cents(paid);
      out.raw(CREDIT);
      out.cents(s.credit[i]);
      out.raw(parts.currency(i));
      out.cents(face - paid);
      out.raw(REVENUE);
      out.cents(s.revenue[i]);
      out.char(CLOSE);
    }
    out.char(0x5d);
  });
}
