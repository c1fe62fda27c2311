/** The scheduled refresh and the finance close run against the store, with its credentials from secrets. */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { parse } from 'yaml';

interface Step {
  uses?: string;
  run?: string;
  with?: { path?: string };
}
interface Workflow {
  on: { workflow_dispatch: { inputs: { month: { required: boolean } } } };
  concurrency: { group: string };
  jobs: Record<string, { env: Record<string, string>; steps: Step[] }>;
}

const load = (name: string) => parse(readFileSync(`.github/workflows/${name}`, 'utf8')) as Workflow;

test('the refresh keeps the output in the store (credentials from secrets); a cache holds only the working copy', () => {
  const job = load('refresh.yml').jobs.refresh;
  expect(job.env.PERKS_OUTPUT).toMatch(/vars\.PERKS_STORE_URL/);
  expect(job.env.AWS_SECRET_ACCESS_KEY).toMatch(/secrets\./);
  expect(job.env.AWS_ACCESS_KEY_ID).toMatch(/secrets\./);
  const cached = job.steps.filter((s) => s.uses?.startsWith('actions/cache'));
  for (const step of cached) expect(step.with?.path).toBe('perks-copy');
  expect(job.env.PERKS_CACHE_DIR).toMatch(/perks-copy$/);
});

test('finance closes a month from a manual workflow: a month input, perks close against the store, the record verified', () => {
  const workflow = load('close.yml');
  expect(workflow.on.workflow_dispatch.inputs.month.required).toBe(true);
  const job = workflow.jobs.close;
  expect(job.env.PERKS_OUTPUT).toMatch(/vars\.PERKS_STORE_URL/);
  expect(job.env.AWS_SECRET_ACCESS_KEY).toMatch(/secrets\./);
  const runs = job.steps.map((s) => s.run ?? '').join('\n');
  expect(runs).toMatch(/args=\(close --month "\$MONTH"/);
  expect(runs).toMatch(/npx perks closes/);
  expect(runs).not.toMatch(/\$\{\{\s*inputs\./); // inputs only through the environment
  expect(load('refresh.yml').concurrency.group).toBe(workflow.concurrency.group);
});
