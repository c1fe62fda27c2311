/**
 * Interactions: a generated timeline per user (lazy, from the seed and the user id, revealed up to the data
 * clock, so advance() brings new ones) plus the ones created through the API, which are stored as sent.
 */
import { INTERACTION_TYPES, ORGANISATION_ID } from '../choices.js';
import { DAY_MS } from '../clock.js';
import { createRng } from '../prng.js';
import type { UserRecord } from './users.js';

export interface InteractionRecord {
  id: number;
  interaction_id: string;
  organisation_id: string;
  organisation_group_id: number;
  interaction_type_id: number;
  user_id: number;
  interaction_at: number;
  interaction_details: Record<string, unknown>;
  created_at: number;
  updated_at: number;
}

const MAX_GENERATED_PER_USER = 999;
const CREATED_ID_BASE = 9_000_000_000;

function generated(seed: number, user: UserRecord, now: number): InteractionRecord[] {
  const rng = createRng(seed, 'interactions', user.id);
  const out: InteractionRecord[] = [];
  const end = Math.min(now, user.deleted_at ?? Infinity);
  let at = user.created_at;
  for (let k = 1; k <= MAX_GENERATED_PER_USER; k++) {
    at += Math.floor(-Math.log(1 - rng.next()) * 25 * DAY_MS);
    const createdAt = at + rng.int(1, 600) * 1000;
    if (createdAt > end) break;
    const type = rng.int(1, INTERACTION_TYPES.length);
    out.push({
      id: user.id * 1000 + k,
      interaction_id: String(5_000_000 + user.id * 1000 + k),
      organisation_id: ORGANISATION_ID,
      organisation_group_id: user.groupId,
      interaction_type_id: type,
      user_id: user.id,
      interaction_at: at,
      interaction_details: {
        channel: rng.pick(['email', 'app', 'web']),
        campaign: `campaign-${rng.int(1, 12)}`,
        type: INTERACTION_TYPES[type - 1],
      },
      created_at: createdAt,
      updated_at: createdAt,
    });
  }
  return out;
}

export class InteractionBook {
  private readonly created = new Map<number, InteractionRecord[]>();
  private readonly typeIds = new Map<string, number>(INTERACTION_TYPES.map((t, i) => [t, i + 1]));
  private nextId = CREATED_ID_BASE;

  constructor(private readonly seed: number) {}

  /** A user's interactions visible at `now`, by interaction_at then id. */
  of(user: UserRecord, now: number): InteractionRecord[] {
    const all = [...generated(this.seed, user, now), ...(this.created.get(user.id) ?? [])];
    return all.sort((a, b) => a.interaction_at - b.interaction_at || a.id - b.id);
  }

  /** Stores an interaction as sent (no deduplication: the same interaction_id twice is stored twice). */
  create(
    user: UserRecord,
    input: {
      interaction_id: number;
      interaction_type: string;
      interaction_at: number;
      interaction_details: Record<string, unknown>;
    },
    now: number,
  ): InteractionRecord {
    let typeId = this.typeIds.get(input.interaction_type);
    if (typeId === undefined) this.typeIds.set(input.interaction_type, (typeId = this.typeIds.size + 1));
    const record: InteractionRecord = {
      id: this.nextId++,
      interaction_id: String(input.interaction_id),
      organisation_id: ORGANISATION_ID,
      organisation_group_id: user.groupId,
      interaction_type_id: typeId,
      user_id: user.id,
      interaction_at: input.interaction_at,
      interaction_details: input.interaction_details,
      created_at: now,
      updated_at: now,
    };
    const list = this.created.get(user.id) ?? [];
    list.push(record);
    this.created.set(user.id, list);
    return record;
  }

  /** Interactions created through the API, per user id. */
  storedCounts(): Record<string, number> {
    return Object.fromEntries([...this.created].map(([id, list]) => [String(id), list.length]));
  }
}
