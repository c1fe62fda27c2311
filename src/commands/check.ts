/**
 * `perks check`: configuration, credentials, the token, group access and the rate limit, with as few
 * calls as possible (a token and one or two group reads), each said in words.
 */
import type { CommandModule } from 'yargs';
import { clientFromConfig } from '../api/index.js';
import { ApiError } from '../api/errors.js';
import { requireApi } from '../config/index.js';
import { resolveGroups, timezoneOf } from '../extract/groups.js';
import { ExitCode } from '../shared/exit-codes.js';
import { redact } from '../shared/redact.js';
import { storeSummary } from '../store/index.js';
import { handle } from './handle.js';
import { configFromFlags, outputOf, withApiOptions, type ApiFlags } from './options.js';

export const checkCommand: CommandModule<object, ApiFlags> = {
  command: ['check', 'doctor'],
  describe: 'Check configuration, credentials, token, group access and rate limit (2–3 calls)',
  builder: (y) => withApiOptions(y),
  handler: (argv) =>
    handle(async () => {
      // Error texts can quote what a server echoed back (a token, a secret): every line is redacted.
      const say = (ok: boolean, text: string) => process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${redact(text)}\n`);
      const config = requireApi(configFromFlags(argv));
      say(
        true,
        `configuration: ${config.baseUrl}, client ${config.clientId}, scope ${config.scope}, ${config.rateLimit} calls/min`,
      );
      const store = argv.storeSession;
      const output = store
        ? await storeSummary(store, Boolean(config.redisUrl))
        : { ok: true, text: `a local folder, ${outputOf(argv).dir}` };
      say(output.ok, `output: ${output.text}`);
      const client = clientFromConfig(config, { retries: 2 });
      try {
        const { level, groups } = await resolveGroups(client, config.groupIds);
        say(true, `token: obtained (${client.counters.tokenRequests} token request); ${level}-level credential`);
        for (const g of groups) {
          say(
            true,
            `group ${g.id}: ${g.display_name ?? g.name ?? ''} ` +
              `(${timezoneOf(g, (m) => say(false, m))}, ${g.locale ?? 'no locale'}${g.sandbox ? ', sandbox' : ''})`,
          );
        }
        const limit = client.limiter.currentRate;
        const reported = client.limiter.reported;
        let exitCode: number = ExitCode.success;
        if (!reported) {
          say(
            true,
            `rate limit: pacing at ${Math.floor(limit)} calls/min (configured ${config.rateLimit}); ` +
              'the API sent no rate headers: its value is in the group settings',
          );
        } else if (reported.limit < config.rateLimit) {
          say(
            false,
            `rate limit: the API reports ${reported.limit} calls/min (X-RateLimit-Limit), below the configured ` +
              `${config.rateLimit}: set PERKS_RATE_LIMIT=${reported.limit} (the client already paces at ${Math.floor(limit)})`,
          );
          exitCode = ExitCode.config;
        } else {
          say(
            true,
            `rate limit: the API reports ${reported.limit} calls/min ` +
              `(X-RateLimit-Limit${reported.remaining === undefined ? '' : `, ${reported.remaining} left`}); ` +
              `pacing at ${Math.floor(limit)} calls/min (configured ${config.rateLimit})`,
          );
        }
        say(true, `${client.counters.calls} calls made`);
        return output.ok ? exitCode : ExitCode.config;
      } catch (err) {
        if (err instanceof ApiError) {
          say(false, err.message);
          return err.exitCode;
        }
        throw err;
      } finally {
        await client.close();
      }
    }),
};
