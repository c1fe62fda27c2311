/** Interactions: a user's list (interactions_from/to on interaction_at, inclusive) and create (stored as sent). */
import type { CreateInteractionBody, InteractionsListBody } from '../../resources/interaction.js';
import { paged, pathUser, type OpHandler } from './context.js';
import { interactionWire } from './wire.js';
import { SandboxError } from '../errors.js';

const INVALID_TYPE = 'The selected interaction type is invalid.';
const invalidType = () => new SandboxError('validation', 422, INVALID_TYPE, { interaction_type: [INVALID_TYPE] });

export const interactionHandlers = {
  listInteractions: (ctx) => {
    const body = ctx.body as InteractionsListBody;
    const from = body.interactions_from ? Date.parse(body.interactions_from) : -Infinity;
    const to = body.interactions_to ? Date.parse(body.interactions_to) : Infinity;
    const items = ctx.world
      .interactionsOf(pathUser(ctx))
      .filter((i) => i.interaction_at >= from && i.interaction_at <= to);
    return paged(ctx, items, interactionWire);
  },

  createInteraction: (ctx) => {
    const user = pathUser(ctx);
    const body = ctx.body as CreateInteractionBody & { interaction_at: string };
    const allowed = ctx.state.options.interactionTypes;
    if (allowed && !allowed.includes(body.interaction_type)) throw invalidType();
    ctx.world.interactions.create(
      user,
      {
        interaction_id: body.interaction_id,
        interaction_type: body.interaction_type,
        interaction_at: Date.parse(body.interaction_at),
        interaction_details: body.interaction_details ?? {},
      },
      ctx.world.now(),
    );
    return { data: [] };
  },
} satisfies Record<string, OpHandler>;
