/**
 * The body of an alert post. json: the event as data (kind, severity, one-line text, run id, figures), for
 * a receiver that routes or stores it. slack: `{"text": …}`, which Slack's incoming webhooks and the many
 * services that copy them (Mattermost, Rocket.Chat, Discord's /slack endpoint) show as a message.
 */
import { snakeJson } from '../shared/json-keys.js';
import type { AlertEvent } from './events.js';
import type { AlertFormat } from './endpoints.js';

export interface JsonAlert {
  source: 'perks-pipeline';
  kind: AlertEvent['kind'];
  severity: AlertEvent['severity'];
  text: string;
  run_id: string | null;
  /** When it was sent, by the program's clock. */
  at: string;
  /** The condition it reports: the same one is sent at most once a day. */
  condition: string;
  figures: AlertEvent['figures'];
}

const MARK = { info: 'info', warning: 'WARNING', error: 'ERROR' } as const;

/** The one-line text form: `[perks] WARNING schema_change: … (run …)`. */
export function alertLine(event: AlertEvent): string {
  return `[perks] ${MARK[event.severity]} ${event.kind}: ${event.text}${event.runId ? ` (run ${event.runId})` : ''}`;
}

export function payloadOf(event: AlertEvent, format: AlertFormat, at: Date): string {
  if (format === 'slack') return JSON.stringify({ text: alertLine(event) });
  const body: JsonAlert = {
    source: 'perks-pipeline',
    kind: event.kind,
    severity: event.severity,
    text: event.text,
    run_id: event.runId ?? null,
    at: at.toISOString(),
    condition: event.condition,
    figures: event.figures,
  };
  return snakeJson(body); // snake_case at every depth, figures too (src/shared/json-keys.ts)
}
