/**
 * The rows of an import file (CSV with a header line, or JSON lines), each checked against the one
 * create-user declaration (src/resources/user.ts): valid rows become request bodies, bad rows become
 * rejections that name the line and the field, never the personal value. A second row with the e-mail
 * or UID of an earlier one is a duplicate.
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { z } from 'zod';
import { CreateUserBody } from '../resources/user.js';
import { parseCsv } from './csv.js';
import { UsersInputError } from './errors.js';

export interface ImportRow {
  /** 1-based line of the file. */
  line: number;
  body: CreateUserBody;
}

export interface RowRejection {
  line: number;
  reason: string;
}

export interface ImportFile {
  rows: ImportRow[];
  rejected: RowRejection[];
}

/** Fields a row may carry: the create-user body's, less the group (the command's --group says it). */
const FIELDS = Object.keys(CreateUserBody.shape).filter((k) => k !== 'organisation_group_id' && k !== 'meta');
const META_FIELDS = Object.keys((CreateUserBody.shape.meta.unwrap() as z.ZodObject).shape);
const BOOLEAN_FIELDS = new Set(['send_activation_email', 'send_activation_sms']);
/** CSV header names, case-insensitive, to the body's field names (`meta.sales` to meta's sales). */
const COLUMNS = new Map<string, string>([
  ...FIELDS.map((f) => [f.toLowerCase(), f] as const),
  ...META_FIELDS.map((m) => [`meta.${m}`, `meta.${m}`] as const),
]);

export async function readImportFile(path: string): Promise<ImportFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsersInputError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; name a CSV file with a header line, or a JSON lines file`,
    );
  }
  const ext = extname(path).toLowerCase();
  const jsonLines =
    ext === '.jsonl' || ext === '.ndjson' || ext === '.json' || (ext !== '.csv' && text.trimStart().startsWith('{'));
  const raw = jsonLines ? jsonRecords(path, text) : csvRecords(path, text);
  if (!raw.length)
    throw new UsersInputError(`${path} holds no users: expected a header line and one user per line (email required)`);
  return checkRows(raw);
}

interface RawRow {
  line: number;
  values: Record<string, unknown>;
}

function csvRecords(path: string, text: string): RawRow[] {
  let records;
  try {
    records = parseCsv(text);
  } catch (err) {
    throw new UsersInputError(`${path} is not valid CSV: ${(err as Error).message}`);
  }
  const [header, ...body] = records;
  if (!header) return [];
  const names = header.fields.map((h) => h.trim());
  const unknown = names.filter((n) => !COLUMNS.has(n.toLowerCase()));
  if (unknown.length)
    throw new UsersInputError(
      `${path}: unknown column ${JSON.stringify(unknown[0])}; the columns are ${[...COLUMNS.values()].join(', ')} (email required)`,
    );
  if (!names.some((n) => n.toLowerCase() === 'email'))
    throw new UsersInputError(`${path}: no email column in the header line; email is required for every user`);
  return body.map((r) => {
    const values: Record<string, unknown> = {};
    names.forEach((n, i) => {
      const cell = (r.fields[i] ?? '').trim();
      if (cell !== '') values[COLUMNS.get(n.toLowerCase())!] = cell;
    });
    return { line: r.line, values };
  });
}

function jsonRecords(path: string, text: string): RawRow[] {
  const out: RawRow[] = [];
  text.split(/\r?\n/).forEach((l, i) => {
    if (l.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(l);
    } catch {
      out.push({ line: i + 1, values: { __error: 'is not a JSON object' } });
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      out.push({ line: i + 1, values: { __error: 'is not a JSON object' } });
      return;
    }
    const unknown = Object.keys(value).find((k) => !FIELDS.includes(k) && k !== 'meta');
    if (unknown)
      throw new UsersInputError(
        `${path} line ${i + 1}: unknown field ${JSON.stringify(unknown)}; the fields are ${FIELDS.join(', ')}, meta (email required)`,
      );
    const { meta, ...rest } = value as Record<string, unknown>;
    const flat: Record<string, unknown> = { ...rest };
    if (meta && typeof meta === 'object') for (const [k, v] of Object.entries(meta)) flat[`meta.${k}`] = v;
    out.push({ line: i + 1, values: flat });
  });
  return out;
}

/** Text cells to the body's types: booleans, meta's integer; then the declaration decides. */
function toBody(values: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (k.startsWith('meta.'))
      meta[k.slice(5)] = k === 'meta.sales' && typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
    else if (BOOLEAN_FIELDS.has(k) && typeof v === 'string')
      body[k] = /^(true|1|yes)$/i.test(v) ? true : /^(false|0|no)$/i.test(v) ? false : v;
    else body[k] = v;
  }
  if (Object.keys(meta).length) body.meta = meta;
  return body;
}

function checkRows(raw: RawRow[]): ImportFile {
  const rows: ImportRow[] = [];
  const rejected: RowRejection[] = [];
  const emails = new Map<string, number>();
  const uids = new Map<string, number>();
  for (const { line, values } of raw) {
    if (values.__error) {
      rejected.push({ line, reason: values.__error as string });
      continue;
    }
    if (values.email === undefined) {
      rejected.push({ line, reason: 'email is missing (required for every user)' });
      continue;
    }
    const parsed = CreateUserBody.safeParse(toBody(values));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.join('.');
      rejected.push({
        line,
        reason: field === 'email' ? 'email is not a valid e-mail address' : `${field}: ${issue.message}`,
      });
      continue;
    }
    const body = parsed.data;
    const email = body.email.toLowerCase();
    const earlier = emails.get(email) ?? (body.UID !== undefined ? uids.get(body.UID) : undefined);
    if (earlier !== undefined) {
      rejected.push({ line, reason: `duplicate of line ${earlier} (same ${emails.has(email) ? 'email' : 'UID'})` });
      continue;
    }
    emails.set(email, line);
    if (body.UID !== undefined) uids.set(body.UID, line);
    rows.push({ line, body });
  }
  return { rows, rejected };
}
