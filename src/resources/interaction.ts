import { z } from 'zod';
import { freeObject, idString, int, timestamp } from './codecs.js';
import { pageRequest } from './envelope.js';

/** A user interaction (spec: Interaction). */
export const Interaction = z.looseObject({
  id: int,
  interaction_id: idString.nullish(),
  organisation_id: idString.nullish(),
  organisation_group_id: int.nullish(),
  interaction_type_id: int.nullish(),
  user_id: int.nullish(),
  interaction_at: timestamp.nullish(),
  interaction_details: freeObject.nullish(),
  created_at: timestamp.nullish(),
  updated_at: timestamp.nullish(),
});
export type Interaction = z.infer<typeof Interaction>;

export const InteractionsListBody = z.object({
  ...pageRequest,
  interactions_from: timestamp.optional(),
  interactions_to: timestamp.optional(),
  organisation_group_id: z.int().optional(),
});
export type InteractionsListBody = z.input<typeof InteractionsListBody>;

export const CreateInteractionBody = z.object({
  interaction_id: z.int(),
  interaction_type: z.string().min(1),
  interaction_at: timestamp,
  interaction_details: freeObject.optional(),
  organisation_group_id: z.int().optional(),
});
export type CreateInteractionBody = z.input<typeof CreateInteractionBody>;
