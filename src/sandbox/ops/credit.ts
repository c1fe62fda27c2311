/** A user's credit: the balances over all items, and one page of the items (oldest first). */
import { paged, pathUser, type OpHandler } from './context.js';
import { creditWire } from './wire.js';

export const creditHandlers = {
  userCredit: (ctx) => {
    const credit = ctx.world.creditOf(pathUser(ctx));
    const page = paged(ctx, credit.credits, (item) => item);
    return { data: creditWire(credit, page.data as typeof credit.credits), page: page.page };
  },
} satisfies Record<string, OpHandler>;
