/**
 * What a call is on the wire, derived from the operations' declarations (resources/operations.ts): the request's
 * body and path made and checked, the response's data and pages decoded by the same zod schemas. Pure functions:
 * the client (client.ts) sends, retries and paces; this says what it sends and what it got.
 */
import { z } from 'zod';
import { operations, type BodyOf, type DataOf, type OperationName } from '../resources/operations.js';
import { Pagination } from '../resources/envelope.js';
import { TokenPayload } from '../resources/auth.js';
import { CreditItem } from '../resources/credit.js';
import { ApiError, RecordParseError } from './errors.js';

export type PathParams = { identifier: string; identifier_value: string | number } | { id: string | number };

export interface CallArgs<N extends OperationName> {
  path?: PathParams;
  body?: BodyOf<N>;
  /** organisation_group_id, sent where the operation accepts it. */
  group?: number;
}

export type ListName =
  | {
      [N in OperationName]: (typeof operations)[N] extends { item: z.ZodType } ? N : never;
    }[OperationName]
  | 'userCredit';

export interface Page<T> {
  page: number;
  records: T[];
  rejects: RecordParseError[];
  pagination?: Pagination;
  /** How many items the server sent on this page (records + rejects). */
  rawCount: number;
  /** The page's `data` as the server sent it (the credit balances sit next to the items). */
  data: unknown;
}

export type ItemOf<N extends ListName> = N extends 'userCredit'
  ? CreditItem
  : (typeof operations)[N] extends { item: infer I extends z.ZodType }
    ? z.output<I>
    : never;

function itemsOf(name: ListName, data: unknown): { raw: unknown[]; item: z.ZodType } {
  if (name === 'userCredit') {
    const credits = (data as { credits?: unknown } | undefined)?.credits;
    return { raw: Array.isArray(credits) ? credits : [], item: CreditItem };
  }
  const op = operations[name] as { item: z.ZodType };
  if (!Array.isArray(data)) throw new ApiError('parse', name, 'the listing has no data array');
  return { raw: data, item: op.item };
}

function toRecordError(operation: string, error: z.ZodError, record: unknown): RecordParseError {
  const issue = error.issues[0];
  let value: unknown = record;
  for (const key of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key];
  return new RecordParseError(operation, issue.path.join('.'), value, issue.message, record);
}

/** The request's body: the caller's, with the group where the operation is group-scoped, checked by its schema. */
export function requestBody<N extends OperationName>(name: N, args: CallArgs<N>, organisationLevel: boolean): unknown {
  const op = operations[name];
  const raw: Record<string, unknown> = { ...((args.body as object | undefined) ?? {}) };
  if (op.groupScoped && args.group !== undefined) raw.organisation_group_id = args.group;
  if (op.groupScoped && raw.organisation_group_id === undefined && organisationLevel) {
    throw new ApiError(
      'client',
      name,
      'the token is organisation level: name the group (organisation_group_id, PERKS_GROUP_IDS)',
    );
  }
  const parsed = (op.body as z.ZodType).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ApiError('validation', name, `request field ${issue.path.join('.') || '(body)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The request's path: the operation's template (the credit path is a setting) with its parameters encoded. */
export function requestPath(name: OperationName, params: PathParams | undefined, creditPath: string): string {
  const template = name === 'userCredit' ? creditPath : operations[name].path;
  return template.replace(/\{(identifier_value|identifier|id)\}/g, (_, key: string) => {
    const value = (params as Record<string, string | number> | undefined)?.[key];
    if (value === undefined || value === '') throw new ApiError('client', name, `path parameter ${key} is missing`);
    return encodeURIComponent(String(value));
  });
}

/** A response's `data`, parsed by the operation's schema (the token endpoint answers without an envelope). */
export function decodeData<N extends OperationName>(name: N, json: unknown): DataOf<N> {
  const op = operations[name];
  if (name === 'token') return TokenPayload.parse(json) as DataOf<N>;
  const data = (json as { data?: unknown } | undefined)?.data;
  const parsed = (op.data as z.ZodType).safeParse(data);
  if (!parsed.success) throw toRecordError(name, parsed.error, data);
  return parsed.data as DataOf<N>;
}

/** A listing's page: each item parsed on its own (a bad one is a reject, not a failed page), and its pagination. */
export function decodePage<N extends ListName>(name: N, page: number, json: unknown): Page<ItemOf<N>> {
  const envelope = (json ?? {}) as Record<string, unknown>;
  const pagination = Pagination.safeParse(envelope);
  const { raw, item } = itemsOf(name, envelope.data);
  const records: ItemOf<N>[] = [];
  const rejects: RecordParseError[] = [];
  for (const value of raw) {
    const parsed = item.safeParse(value);
    if (parsed.success) records.push(parsed.data as ItemOf<N>);
    else rejects.push(toRecordError(name, parsed.error, value));
  }
  return {
    page,
    records,
    rejects,
    pagination: pagination.success ? pagination.data : undefined,
    rawCount: raw.length,
    data: envelope.data,
  };
}
