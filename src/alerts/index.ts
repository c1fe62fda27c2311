/**
 * Alerts: what needs a person (a run failed or partial, stale data, a schema change, quarantine above the
 * threshold, a close record that does not verify, a write-back backlog, an erasure queue not drained) posted
 * as JSON to the webhooks of PERKS_ALERT_WEBHOOK. Bounded and harmless: posts run after the work, each
 * webhook's in turn, at most ATTEMPTS tries of PERKS_ALERT_TIMEOUT each; nothing here throws into a run or
 * changes its exit code, and a webhook that fails is named once in the summary. docs/assumptions.md (Alerts).
 */
import type { Config } from '../config/index.js';
import type { Output } from '../output/index.js';
import type { ExtractResult } from '../extract/index.js';
import { readCloses } from '../closes/index.js';
import { owedErasures } from '../lake/index.js';
import type { RunSummary } from '../run/index.js';
import { collectStatus, judge, type Freshness, type FreshnessOptions, type StatusReport } from '../status/index.js';
import { now, todayUtc } from '../shared/clock.js';
import { ExitCode } from '../shared/exit-codes.js';
import { SentToday } from './dedupe.js';
import { deliver } from './deliver.js';
import { parseEndpoints } from './endpoints.js';
import { AlertConfigError, AlertDeliveryError } from './errors.js';
import {
  closeRecordEvent,
  erasureEvent,
  extractEvents,
  runOutcomeEvent,
  safeText,
  statusEvents,
  testEvent,
  type AlertEvent,
} from './events.js';
import { payloadOf } from './payload.js';

export { AlertConfigError, AlertDeliveryError } from './errors.js';
export { ALERT_KINDS, safeText, type AlertEvent, type AlertKind, type Severity } from './events.js';
export { alertLine, type JsonAlert } from './payload.js';
export { alertStatePath } from './dedupe.js';

export type AlertSettings = Pick<Config, 'alertWebhook' | 'alertFormat' | 'alertTimeout' | 'alertBacklog'>;

export interface AlertOutcome {
  /** Events raised (before the once-a-day rule). */
  events: number;
  /** Posts delivered. */
  sent: number;
  /** Posts not made: the webhook was told of that condition today already. */
  repeated: number;
  webhooks: number;
  /** One line per malformed URL and per webhook that did not take its alerts. */
  problems: string[];
}

export const alertsConfigured = (s: AlertSettings): boolean => Boolean(s.alertWebhook?.trim());

/**
 * Posts the events to every webhook, once per condition and day, as the state of `output` remembers (no output:
 * every time); undefined when no webhook is configured.
 */
export async function sendAlerts(
  settings: AlertSettings,
  events: readonly AlertEvent[],
  output: Output | undefined,
): Promise<AlertOutcome | undefined> {
  if (!alertsConfigured(settings)) return undefined;
  const { endpoints, problems } = parseEndpoints(settings.alertWebhook, settings.alertFormat);
  const outcome: AlertOutcome = { events: events.length, sent: 0, repeated: 0, webhooks: endpoints.length, problems };
  try {
    const told = output && (await SentToday.read(output.dir, todayUtc()));
    // webhooks side by side, each one's alerts in turn; its problem, if any, in the webhooks' order
    const failures = await Promise.all(
      endpoints.map(async (endpoint) => {
        for (const [i, event] of events.entries()) {
          if (told?.has(endpoint.id, event.condition)) {
            outcome.repeated += 1;
            continue;
          }
          const d = await deliver(endpoint, payloadOf(event, endpoint.format, now()), settings.alertTimeout * 1000);
          if (d.ok) {
            outcome.sent += 1;
            told?.mark(endpoint.id, event.condition);
            continue;
          }
          // a webhook that failed one alert is not kept waiting on for the others: they go next time
          const left = events.length - i;
          return `${endpoint.label} did not take ${left === 1 ? 'the alert' : `${left} alerts`}: ${d.reason}; check the webhook (\`perks alert test\`)`;
        }
        return undefined;
      }),
    );
    problems.push(...failures.filter((f): f is string => f !== undefined));
    if (told && outcome.sent) await told.save();
  } catch (err) {
    problems.push(`not all alerts were handled: ${safeText(err instanceof Error ? err.message : String(err))}`);
  }
  return outcome;
}

/** The summary's lines about alerts (none when no webhook is configured). */
export function alertSummaryLines(outcome: AlertOutcome | undefined): string[] {
  if (!outcome) return [];
  const repeated = outcome.repeated ? `, ${outcome.repeated} not repeated (already sent today)` : '';
  const head = outcome.events
    ? `alerts: ${outcome.sent} sent to ${outcome.webhooks} webhook${outcome.webhooks === 1 ? '' : 's'}${repeated}`
    : 'alerts: nothing to report';
  return [head, ...outcome.problems.map((p) => `alerts: ${p} (the outcome and exit code are unchanged)`)];
}

/** What the state of the output directory calls for: stale data, a backlog, the close record, the erasure queue. */
export async function conditionEvents(
  settings: AlertSettings,
  output: Output,
  report: StatusReport,
  freshness: Freshness,
): Promise<AlertEvent[]> {
  const events = statusEvents(report, freshness, settings.alertBacklog);
  try {
    await readCloses(output);
  } catch (err) {
    events.push(closeRecordEvent(err instanceof Error ? err.message : String(err), output.dir));
  }
  const erasure = erasureEvent(await owedErasures(output.dir));
  if (erasure) events.push(erasure);
  return events;
}

/**
 * After `perks run`: its outcome, the extract's quarantine and schema changes, and the conditions its output
 * directory is left in. `freshness`: the status thresholds, or why they could not be read.
 */
export async function alertRun(
  config: Config,
  output: Output,
  summary: RunSummary,
  freshness: FreshnessOptions | { error: string },
): Promise<AlertOutcome | undefined> {
  if (!alertsConfigured(config)) return undefined;
  const events: AlertEvent[] = [];
  const problems: string[] = [];
  try {
    const outcome = runOutcomeEvent('perks run', summary);
    if (outcome) events.push(outcome);
    if (summary.extract) events.push(...extractEvents(summary.extract, output.dir, { outcome: false }));
    if ('error' in freshness) problems.push(`no stale-data alert: ${freshness.error}`);
    else {
      const report = await collectStatus(output, config, now());
      events.push(...(await conditionEvents(config, output, report, judge(report, freshness))));
    }
  } catch (err) {
    problems.push(`some alerts could not be worked out: ${safeText(err instanceof Error ? err.message : String(err))}`);
  }
  const sent = await sendAlerts(config, events, output);
  return sent && { ...sent, problems: [...problems, ...sent.problems] };
}

/** After `perks extract`: its outcome, quarantine above the threshold, schema changes. */
export async function alertExtract(
  config: Config,
  output: Output,
  result: ExtractResult,
): Promise<AlertOutcome | undefined> {
  if (!alertsConfigured(config)) return undefined;
  return sendAlerts(config, extractEvents(result, output.dir, { outcome: true }), output);
}

/**
 * Runs `work`; when it throws (refused credentials, an unusable output directory…), the failure is posted
 * as `run_failed`, named on stderr if a webhook did not take it, and thrown on unchanged. Another run holding
 * the lock (exit 5) is not a failure.
 */
export async function alertOnThrow<T>(
  config: Config,
  output: Output,
  command: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as { exitCode?: number }).exitCode ?? ExitCode.failed;
    if (alertsConfigured(config) && code !== ExitCode.locked) {
      const message = err instanceof Error ? err.message : String(err);
      const event: AlertEvent = {
        kind: 'run_failed',
        severity: 'error',
        text: `${command} failed (exit ${code}): ${safeText(message, output.dir)}`,
        condition: `run_failed:${command}:thrown`,
        figures: { exit_code: code },
      };
      for (const line of (await sendAlerts(config, [event], output))?.problems ?? [])
        process.stderr.write(`perks: alerts: ${line}\n`);
    }
    throw err;
  }
}

/** `perks status --alert`: the conditions of the output directory (run it from another scheduler too). */
export async function alertStatus(
  config: Config,
  output: Output,
  report: StatusReport,
  freshness: Freshness,
): Promise<AlertOutcome | undefined> {
  if (!alertsConfigured(config)) return undefined;
  return sendAlerts(config, await conditionEvents(config, output, report, freshness), output);
}

/** `perks alert test`: a sample to every webhook, every time; a webhook missing, malformed or failing is an error. */
export async function sendTestAlert(config: Config): Promise<AlertOutcome> {
  if (!alertsConfigured(config))
    throw new AlertConfigError(
      'PERKS_ALERT_WEBHOOK is not set: set it to one or more webhook URLs (comma-separated), e.g. https://hooks.slack.com/services/…',
    );
  const bad = parseEndpoints(config.alertWebhook).problems;
  if (bad.length) throw new AlertConfigError(bad.join('; '));
  const outcome = (await sendAlerts(config, [testEvent()], undefined))!;
  if (outcome.problems.length) throw new AlertDeliveryError(outcome.problems.join('; '));
  return outcome;
}
