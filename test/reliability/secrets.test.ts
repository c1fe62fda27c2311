import { describe, test } from 'vitest';
import { secretsScenario } from './scenarios/secrets.js';
import { secretFormsScenario } from './scenarios/secret-forms.js';
import { expectAtGoal, fast } from './at-goal.js';

describe('secrets', () => {
  test('a canary secret and canary tokens, echoed back by failing servers, appear in no output and no file value, through 401, 500 and crash paths with PERKS_DEBUG=1', async () => {
    // A subset of SECRET_RUNS on 6 days; `npm run reliability -- --only secrets` runs them all on 40
    // (`run` with 500s, ~30 s of retries, among them).
    const runs = [
      { args: ['check'], mode: 'token500' as const },
      { args: ['check'], mode: 'api401' as const },
      { args: ['extract'], mode: 'api401' as const },
      { args: ['extract'], mode: 'token401' as const },
      // a named point: at the sandbox's limit a 6-day extract can end before a random kill
      { args: ['extract', '--full-refresh'], mode: 'ok' as const, crashAt: 'after-page:3' },
      { args: ['build'], mode: 'ok' as const },
      { args: ['build'], mode: 'ok' as const, crashAt: 'mid-build:5' },
      { args: ['writeback'], mode: 'api401' as const },
      { args: ['run'], mode: 'api401' as const },
      { args: ['run'], mode: 'ok' as const, crashAt: 'after-page:2' },
      { args: ['writeback'], mode: 'ok' as const },
    ];
    expectAtGoal(await secretsScenario({ ...fast(), runs, days: 6 }));
  }, 300_000);

  test('an API echoing the client secret and the token JSON-escaped, URL-encoded in a redirect, in base64 and cut at an excerpt edge: no 8 characters of any form reach any output or file', async () => {
    // `npm run reliability -- --only secret-forms` runs every form with check and extract
    expectAtGoal(
      await secretFormsScenario({
        ...fast(),
        forms: ['json', 'url-location', 'base64', 'cut-300'],
        commands: [['check']],
      }),
    );
  }, 300_000);
});
