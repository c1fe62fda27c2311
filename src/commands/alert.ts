/** `perks alert test`: posts a sample alert to every webhook of PERKS_ALERT_WEBHOOK and says how each answered. */
import type { CommandModule } from 'yargs';
import { alertSummaryLines, sendTestAlert } from '../alerts/index.js';
import { handle } from './handle.js';
import { configFromFlags, type ApiFlags } from './options.js';

export const alertCommand: CommandModule<object, ApiFlags> = {
  command: 'alert <action>',
  describe: 'Alerts: `perks alert test` posts a sample to every webhook of PERKS_ALERT_WEBHOOK',
  builder: (y) =>
    y
      .positional('action', { choices: ['test'], describe: 'test: send a sample alert' })
      .example('PERKS_ALERT_WEBHOOK=https://hooks.slack.com/services/… $0 alert test', 'check a Slack webhook'),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      // exit 2: no webhook, or a malformed one; exit 1: a webhook did not take the sample
      const outcome = await sendTestAlert(config);
      for (const line of alertSummaryLines(outcome)) process.stdout.write(`${line}\n`);
    }),
};
