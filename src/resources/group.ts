import { z } from 'zod';
import { bool01, int } from './codecs.js';

/** A group of the organisation (spec: Group). */
export const Group = z.looseObject({
  id: int,
  name: z.string().nullish(),
  display_name: z.string().nullish(),
  sandbox: bool01.nullish(),
  locale: z.string().nullish(),
  timezone: z.string().nullish(),
  custom_domain: z.string().nullish(),
  subdomain: z.string().nullish(),
});
export type Group = z.infer<typeof Group>;

/** Body of /v3/group and /v3/group/list. */
export const GroupRequest = z.object({ organisation_group_id: z.int().optional() });
export type GroupRequest = z.infer<typeof GroupRequest>;
