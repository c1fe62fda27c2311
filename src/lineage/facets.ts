/** The facets this program fills, each stamped with its producer and its schema's URL (events.ts). */
import { redact } from '../shared/redact.js';
import { perksVersion } from '../shared/version.js';
import { FACET_SCHEMAS, type Facet, type JobRef } from './events.js';

/** Who sends the events: this program at its version (a URN: the package is not published at a URL). */
export const producer = (): string => `urn:perks-pipeline:${perksVersion()}`;

const facet = (schema: keyof typeof FACET_SCHEMAS, fields: Record<string, unknown>): Facet => ({
  _producer: producer(),
  _schemaURL: FACET_SCHEMAS[schema],
  ...fields,
});

/** What kind of job: a command, a step of `perks run`, or a model of a build; always a batch. */
export const jobTypeFacet = (jobType: 'COMMAND' | 'TASK' | 'MODEL'): Facet =>
  facet('jobType', { processingType: 'BATCH', integration: 'PERKS', jobType });

export const processingEngineFacet = (): Facet =>
  facet('processingEngine', { name: 'perks', version: perksVersion(), openlineageAdapterVersion: perksVersion() });

/** The run that started this one (the `perks run` of a step, the build of a model), and the root of them all. */
export const parentFacet = (parent: { job: JobRef; runId: string }, root = parent): Facet =>
  facet('parent', {
    run: { runId: parent.runId },
    job: parent.job,
    root: { run: { runId: root.runId }, job: root.job },
  });

/** A failure's message, redacted: no secret leaves in an event. */
export const errorMessageFacet = (message: string): Facet =>
  facet('errorMessage', { message: redact(message), programmingLanguage: 'TypeScript' });

/** The run id of the run manifests and of every message (`<out>/runs/<run_id>.json` for an extract). */
export const perksRunFacet = (runId: string, command: string): Facet => facet('perksRun', { runId, command });

export const schemaFacet = (columns: readonly { name: string; type: string; description?: string }[]): Facet =>
  facet('schema', {
    fields: columns.map((c) => ({
      name: c.name,
      type: c.type,
      ...(c.description ? { description: c.description } : {}),
    })),
  });

export const outputStatisticsFacet = (stats: { rowCount?: number; size?: number; fileCount?: number }): Facet =>
  facet('outputStatistics', Object.fromEntries(Object.entries(stats).filter(([, v]) => v !== undefined)));

export interface Assertion {
  assertion: string;
  success: boolean;
  column?: string;
  severity?: 'error' | 'warn';
}

export const assertionsFacet = (assertions: Assertion[]): Facet => facet('dataQualityAssertions', { assertions });
