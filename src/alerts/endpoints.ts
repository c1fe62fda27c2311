/**
 * The webhooks alerts go to (PERKS_ALERT_WEBHOOK: one or more URLs, separated by commas or blanks). A
 * webhook's URL is a secret (a Slack URL's path is its token): its path, query and password are registered
 * with the redaction of all output, and a webhook is only ever named by its position and host.
 */
import { createHash } from 'node:crypto';
import { registerSecret } from '../shared/redact.js';

export type AlertFormat = 'json' | 'slack';

export interface Endpoint {
  url: URL;
  /** How it is named in messages: `webhook 2 (https://hooks.slack.com/…)`. */
  label: string;
  /** A stable id for the dedupe state (a digest: the URL itself is never written). */
  id: string;
  format: AlertFormat;
}

export interface Endpoints {
  endpoints: Endpoint[];
  /** One line per URL that cannot be used, what is wrong and what to do. */
  problems: string[];
}

const ordinal = (i: number) => `webhook ${i + 1}`;

export function parseEndpoints(value: string | undefined, format?: AlertFormat): Endpoints {
  const out: Endpoints = { endpoints: [], problems: [] };
  const items = (value ?? '').split(/[\s,]+/).filter(Boolean);
  items.forEach((text, i) => {
    const url = URL.canParse(text) ? new URL(text) : undefined;
    for (const secret of [url ? `${url.pathname}${url.search}` : text, url?.password, url?.search.slice(1)])
      if (secret && secret !== '/') registerSecret(secret);
    if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
      out.problems.push(
        `PERKS_ALERT_WEBHOOK: ${ordinal(i)} of ${items.length} is not an http(s) URL` +
          ` (${url ? `scheme ${url.protocol}` : 'it does not parse'}): fix it; alerts go to the other webhooks`,
      );
      return;
    }
    out.endpoints.push({
      url,
      label: `${ordinal(i)} (${url.protocol}//${url.host}/…)`,
      id: createHash('sha256').update(url.href).digest('hex').slice(0, 16),
      format: format ?? (url.hostname === 'hooks.slack.com' ? 'slack' : 'json'),
    });
  });
  return out;
}
