/**
 * Secrets in the forms they come back in (issue 16, item 4). An API that echoes the request it was sent
 * in each form a careless server might: the client secret (token endpoint) and the access token (API
 * calls) whole, JSON-escaped (once and twice), URL-encoded in a redirect's Location, base64 of the whole
 * body, and cut at the 300-character error excerpt or the 200-character Location excerpt. The canary
 * secret holds a quote, a backslash, a slash, a space, `+`, `&`, `=` and a non-ASCII letter, so every
 * form differs from the others. Then stdout, stderr and every file of the output are searched for any
 * 8 characters in a row of any form of the secret or the token: 0 hits.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formsOf, MIN_CUT } from '../../../src/shared/redact.js';
import { runCli, type CliResult } from '../../support/cli.js';
import { withScratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

/** How the API echoes what it was sent. */
export const ECHO_FORMS = ['whole', 'json', 'json-twice', 'url-location', 'base64', 'cut-300', 'cut-location'] as const;
export type EchoForm = (typeof ECHO_FORMS)[number];
export type Target = 'secret' | 'token';

interface Echo {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** The answer echoing `value` (and the request body it came in) in `form`. */
function echo(form: EchoForm, value: string, requestBody: string): Echo {
  const json = (message: string, errors: unknown = {}) => ({ status: 422, body: JSON.stringify({ message, errors }) });
  switch (form) {
    case 'whole':
      return { status: 422, headers: { 'content-type': 'text/plain' }, body: `{"message":"refused ${value}"}` };
    case 'json':
      return json(`refused: ${JSON.stringify({ got: value })}`, { request: [requestBody] });
    case 'json-twice':
      return json('refused', { request: [JSON.stringify({ got: requestBody })] });
    case 'url-location':
      return {
        status: 302,
        headers: { location: `https://login.example.com/next?v=${encodeURIComponent(value)}` },
        body: '',
      };
    case 'base64':
      return json(`refused, request was ${Buffer.from(requestBody).toString('base64')}`, {
        auth: [Buffer.from(`101:${value}`).toString('base64')],
      });
    case 'cut-300': {
      // the errors' JSON is cut at 300 characters: 12 characters of the escaped value are left at its end
      const escaped = JSON.stringify(value).slice(1, -1);
      return json('refused', { value: [`${'x'.repeat(300 - '{"value":["'.length - 12)}${escaped}`] });
    }
    case 'cut-location': {
      const url = 'https://login.example.com/next?v=';
      return {
        status: 302,
        headers: { location: `${url}${'y'.repeat(200 - url.length - 10)}${encodeURIComponent(value)}` },
        body: '',
      };
    }
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(body));
  });
}

/** A fake API: tokens are `token`; the target's endpoint answers with the echo of the current form. */
async function echoingApi(
  current: { form: EchoForm; target: Target },
  token: string,
): Promise<{ url: string; server: Server; echoed: () => number }> {
  let echoed = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const isToken = (req.url ?? '').startsWith('/v3/oauth/token');
      const send = (e: Echo) => {
        echoed += 1;
        res.writeHead(e.status, { 'content-type': 'application/json', ...e.headers }).end(e.body);
      };
      if (isToken && current.target === 'secret')
        return send(echo(current.form, (JSON.parse(body) as { client_secret: string }).client_secret, body));
      if (isToken)
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: 200, data: { token_type: 'Bearer', expires_in: 3600, access_token: token } }));
      const given = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
      send(echo(current.form, given, `${req.method} ${req.url} authorization: Bearer ${given} ${body}`));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server, echoed: () => echoed };
}

/** Every 8-character run of every form of the values: what must appear nowhere. */
function needles(values: string[]): Set<string> {
  const grams = new Set<string>();
  for (const v of values)
    for (const f of formsOf(v)) for (let i = 0; i + MIN_CUT <= f.length; i++) grams.add(f.slice(i, i + MIN_CUT));
  return grams;
}

const found = (text: string, grams: Set<string>): string | undefined => {
  for (let i = 0; i + MIN_CUT <= text.length; i++)
    if (grams.has(text.slice(i, i + MIN_CUT))) return text.slice(Math.max(0, i - 20), i + MIN_CUT + 20);
  return undefined;
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

export async function secretFormsScenario(
  o: ScenarioOptions & { forms?: EchoForm[]; targets?: Target[]; commands?: string[][] },
): Promise<Row[]> {
  const secret = `Canary"Sec\\ret/${randomBytes(5).toString('hex')} é+&=q`;
  const token = `CanaryTok.${randomBytes(8).toString('base64url')}/+=`;
  const current = { form: 'whole' as EchoForm, target: 'secret' as Target };
  const api = await echoingApi(current, token);
  const grams = needles([secret, token]);
  const problems: string[] = [];
  const outputs: CliResult[] = [];
  const forms = o.forms ?? [...ECHO_FORMS];
  const targets = o.targets ?? ['secret', 'token'];
  const commands = o.commands ?? [['check'], ['extract', '--streams', 'groups', '--quiet']];
  try {
    return await withScratch('secret-forms', async (scratch) => {
      const out = scratch.dir('out');
      const env = {
        PERKS_BASE_URL: api.url,
        PERKS_CLIENT_ID: '101',
        PERKS_CLIENT_SECRET: secret,
        PERKS_OUTPUT: out,
        PERKS_DEBUG: '1',
        PERKS_START_DATE: '2026-11-20',
      };
      for (const target of targets) {
        for (const form of forms) {
          for (const args of commands) {
            Object.assign(current, { form, target });
            const r = await runCli(args, env, { timeoutMs: 60_000 });
            outputs.push(r);
            for (const [where, text] of [
              ['stdout', r.stdout],
              ['stderr', r.stderr],
            ] as const) {
              const leak = found(text, grams);
              if (leak)
                problems.push(
                  `${args[0]} [${target} echoed ${form}]: ${where} holds a cut of it: …${leak.replace(/[^\x20-\x7e]/g, '?')}…`,
                );
            }
            if (r.code === 0)
              problems.push(`${args[0]} [${target} echoed ${form}]: exit 0 though every call was refused`);
            o.log(`secret forms: ${args[0]} [${target} echoed ${form}] → ${r.code}`);
          }
        }
      }
      for (const file of filesUnder(out)) {
        const leak = found(readFileSync(file, 'latin1'), grams) ?? found(readFileSync(file, 'utf8'), grams);
        if (leak) problems.push(`${file.slice(out.length + 1)} holds a cut of a canary`);
      }
      return [
        row(
          'secrets echoed in other forms (JSON, URL, base64, cut)',
          outputs.length,
          problems,
          `${forms.length} forms × ${targets.length} (client secret, token) × ${commands.length} commands: ${outputs.length} runs, ${api.echoed()} echoing answers, ${problems.length} leaks of any 8 characters of any form`,
        ),
      ];
    });
  } finally {
    await new Promise((resolve) => api.server.close(resolve));
  }
}
