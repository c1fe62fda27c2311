/**
 * Request bodies: read (size-capped), parsed as a JSON object, validated with the operation's zod schema.
 * Every failure is a 422 with Laravel's body {message, errors: {field: [..]}} naming the field.
 */
import { z } from 'zod';
import { BODY_TOO_LARGE_STATUS, MAX_BODY_BYTES } from '../choices.js';
import { SandboxError, fieldError, validationError } from '../errors.js';
import type { SandboxRequest } from './exchange.js';

export async function readJsonObject(req: SandboxRequest): Promise<Record<string, unknown>> {
  const declared = Number(req.header('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES)
    throw new SandboxError('too_large', BODY_TOO_LARGE_STATUS, `The request body exceeds ${MAX_BODY_BYTES} bytes.`);
  const text = await req.text();
  if (text.length > MAX_BODY_BYTES)
    throw new SandboxError('too_large', BODY_TOO_LARGE_STATUS, `The request body exceeds ${MAX_BODY_BYTES} bytes.`);
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw fieldError('body', 'The request body must be valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw fieldError('body', 'The request body must be a JSON object.');
  return parsed as Record<string, unknown>;
}

function describe(issue: z.core.$ZodIssue, field: string, input: unknown): string {
  const the = `The ${field} field`;
  switch (issue.code) {
    case 'invalid_type':
      return input === undefined ? `${the} is required.` : `${the} must be ${article(issue.expected)}.`;
    case 'too_small':
      return issue.origin === 'array'
        ? `${the} must have at least ${issue.minimum} items.`
        : issue.origin === 'string'
          ? `${the} must be at least ${issue.minimum} characters.`
          : `${the} must be at least ${issue.minimum}.`;
    case 'too_big':
      return issue.origin === 'array'
        ? `${the} must not have more than ${issue.maximum} items.`
        : issue.origin === 'string'
          ? `${the} must not be greater than ${issue.maximum} characters.`
          : `${the} must not be greater than ${issue.maximum}.`;
    case 'invalid_format':
      return issue.format === 'email'
        ? `${the} must be a valid email address.`
        : `${the} format is invalid: ${issue.message}.`;
    case 'invalid_value':
      return `The selected ${field} is invalid; expected one of: ${issue.values.map(String).join(', ')}.`;
    default:
      return `${the} is invalid: ${issue.message}.`;
  }
}

const article = (type: string) => (type === 'int' ? 'an integer' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** Validates a body; the output is the schema's decoded value. */
export function validate<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length ? issue.path.map(String).join('.') : 'body';
    const input = issue.path.reduce<unknown>(
      (v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined),
      raw,
    );
    (errors[field] ??= []).push(describe(issue, field, input));
  }
  throw validationError(errors);
}

/**
 * The advertised page URLs (`<path>?page=N`) work when followed as given: a listing reads `page` and
 * `per_page` from the query string when the body does not give them (the body wins when both do).
 * A query value that is not a whole number is passed on as text, so validation answers 422 naming it.
 */
export function withQueryPaging(
  schema: z.ZodType,
  raw: Record<string, unknown>,
  query: URLSearchParams,
): Record<string, unknown> {
  const shape = (schema as { shape?: Record<string, unknown> }).shape ?? {};
  const out = { ...raw };
  for (const field of ['page', 'per_page']) {
    const value = query.get(field);
    if (!(field in shape) || value === null || out[field] !== undefined) continue;
    out[field] = /^\d+$/.test(value) ? Number(value) : value;
  }
  return out;
}
