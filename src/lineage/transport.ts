/**
 * Sends a command's events where the settings say (config's LineageTransport): posted to a collector, or
 * appended to a file, one JSON per line. In order, one at a time, each bounded (the collector's timeout); the
 * first failure ends the sending for the command (no retry, no queue left behind) and, once every event is
 * settled, one warning line says how many were not sent and why. Nothing here throws: lineage never stops the work.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LineageTransport } from '../config/index.js';
import { postOnce } from '../shared/post-once.js';
import { redact, registerSecret } from '../shared/redact.js';
import type { RunEvent } from './events.js';

export interface Emitter {
  /** Queues an event (sent after those before it). */
  emit(event: RunEvent): void;
  /** Waits for every queued event; then, if any was not sent, writes the one warning line. */
  flush(): Promise<void>;
}

/** Sends nothing: lineage is not configured. */
export const SILENT: Emitter = { emit: () => undefined, flush: () => Promise.resolve() };

type Send = (event: RunEvent) => Promise<string | undefined>;

export function emitterFor(transport: LineageTransport, warn: (line: string) => void): Emitter {
  if (transport.kind === 'none') return SILENT;
  const send: Send = transport.kind === 'http' ? httpSend(transport) : fileSend(transport.path);
  const where = transport.kind === 'http' ? transport.url : transport.path;
  let chain: Promise<void> = Promise.resolve();
  let failure: string | undefined;
  let lost = 0;
  let queued = 0;
  let warned = false;
  return {
    emit(event) {
      queued++;
      chain = chain.then(async () => {
        if (failure !== undefined) {
          lost++;
          return;
        }
        failure = await send(event).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
        if (failure !== undefined) lost++;
      });
    },
    async flush() {
      await chain;
      if (failure === undefined || warned) return;
      warned = true;
      warn(
        redact(
          `perks: warning: lineage: ${lost} of ${queued} OpenLineage events not sent to ${where}: ${failure} (the work itself is unaffected)`,
        ),
      );
    },
  };
}

/** Posts to the collector; a failure is its reason (an answer that is not 2xx, no answer in time, no connection). */
function httpSend(t: Extract<LineageTransport, { kind: 'http' }>): Send {
  registerSecret(t.apiKey);
  const url = new URL(t.url);
  const headers = t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : undefined;
  return async (event) => {
    const answer = await postOnce(url, JSON.stringify(event), t.timeoutMs, {
      headers,
      timeoutText: 'OPENLINEAGE__TRANSPORT__TIMEOUT',
    });
    if ('error' in answer) return answer.error;
    return answer.status >= 200 && answer.status < 300 ? undefined : `HTTP ${answer.status}`;
  };
}

/** Appends one line per event (the folder made when missing). */
function fileSend(path: string): Send {
  return (event) => {
    try {
      mkdirSync(dirname(path), { recursive: true });
      appendFileSync(path, `${JSON.stringify(event)}\n`);
      return Promise.resolve(undefined);
    } catch (err) {
      return Promise.resolve(
        `cannot append to the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  };
}
