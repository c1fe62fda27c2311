/**
 * 12. The sandbox binds to loopback by default (in-process and `perks sandbox`), and for each place the
 * spec says "not shown", docs/reference/sandbox.md states what the sandbox chose.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox } from '../../../src/sandbox/index.js';
import { ROOT, startCli } from '../../support/cli.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

const SPEC = '/work/shared/spec/perks-api-v3.md';

/** Each "not shown" of the spec (by the words that name it) and what the Sandbox section must say about it. */
export const NOT_SHOWN: { spec: RegExp; docs: RegExp }[] = [
  { spec: /Values beyond Active: not shown/, docs: /Users: `Active`, `Deactivated`, `Anonymised`/ },
  { spec: /order_status.*other values: not shown/, docs: /Orders: `Complete`, `Pending`, `Refunded`, `Cancelled`/ },
  { spec: /Credit item: status.*other values: not shown/, docs: /Credit items: `Available`, `Spent`/ },
  { spec: /Allowed interaction_type values: not shown/, docs: /non-empty `interaction_type` is accepted/ },
  { spec: /status string a deactivated or anonymised user carries: not shown/, docs: /`Deactivated`, `Anonymised`/ },
  { spec: /Transitions of order and credit statuses: not shown/, docs: /pending orders\s+settle/ },
  {
    spec: /Responses of update, deactivate and restore: not shown/,
    docs: /deactivate answers an\s+empty `data` array/,
  },
  {
    spec: /Request body of user list, restore, offer details and offer list: not shown/,
    docs: /user list and the offer list take/,
  },
  { spec: /Type of the offer id path parameter: not shown/, docs: /offer id (path parameter )?is/ },
  { spec: /Path of the credit operation: not shown/, docs: /credit operation is served at/ },
  { spec: /Pagination fields of the user list and order responses: not shown/, docs: /`bareListings: true`/ },
  { spec: /Other scope values: not shown/, docs: /Any non-empty scope is accepted/ },
  { spec: /How a token is revoked: not shown/, docs: /revokes only by fault injection/ },
  { spec: /Events: not shown/, docs: /[Ee]vents/ },
  { spec: /Error body shape: not shown/, docs: /Error bodies\*\* are Laravel's/ },
  { spec: /Status codes other than those above.*not shown/, docs: /Statuses chosen/ },
  { spec: /Rate-limit response headers.*not shown/, docs: /`X-RateLimit-Limit`/ },
  { spec: /Deprecation and compatibility policy: not shown/, docs: /[Dd]eprecat/ },
];

export async function sandboxScenario(_o: ScenarioOptions): Promise<Row[]> {
  const problems: string[] = [];
  // In-process, with no host given.
  const sandbox = await startSandbox({ port: 0, scale: 'tiny' });
  const inProcess = new URL(sandbox.baseUrl).hostname;
  await sandbox.close();
  if (inProcess !== '127.0.0.1') problems.push(`startSandbox() listens on ${inProcess}`);
  // The command line's start line.
  const cli = startCli(['sandbox', '--port', '0'], {});
  const first = JSON.parse((await firstLine(cli)) || '{}') as { base_url?: string };
  cli.child.kill('SIGTERM');
  await cli.done;
  const fromCli = first.base_url ? new URL(first.base_url).hostname : '(no start line)';
  if (fromCli !== '127.0.0.1') problems.push(`perks sandbox listens on ${fromCli}`);
  const bind = row(
    'sandbox binds to loopback by default',
    2,
    problems,
    `startSandbox() on ${inProcess}, perks sandbox on ${fromCli}`,
  );

  const spec = readFileSync(SPEC, 'utf8');
  const section = readFileSync(join(ROOT, 'docs', 'reference', 'sandbox.md'), 'utf8');
  const inSpec = spec.split('\n').filter((l) => /not shown/.test(l)).length;
  const missing = NOT_SHOWN.filter((n) => !n.docs.test(section)).map(
    (n) => `no stated choice for "${n.spec.source.replace(/\\/g, '')}"`,
  );
  const unknown = NOT_SHOWN.filter((n) => !n.spec.test(spec)).map((n) => `the spec no longer says ${n.spec.source}`);
  const listed = row(
    'sandbox\'s choices where the spec says "not shown"',
    NOT_SHOWN.length,
    [...unknown, ...missing],
    `${NOT_SHOWN.length - missing.length}/${NOT_SHOWN.length} "not shown" items (${inSpec} lines of the spec) have a stated choice in docs/reference/sandbox.md`,
  );
  return [bind, listed];
}

/** The first complete stdout line (the start line), waiting up to 10 s for it. */
async function firstLine(cli: ReturnType<typeof startCli>): Promise<string> {
  for (let waited = 0; !cli.text().stdout.includes('\n') && waited < 10_000; waited += 20)
    await new Promise((r) => setTimeout(r, 20));
  return cli.text().stdout.split('\n')[0];
}
