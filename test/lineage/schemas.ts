/**
 * The official OpenLineage JSON Schemas (vendored in test/fixtures/openlineage/, README there) as one validator:
 * an event is checked against the spec (2-0-2), then each facet it carries against its own schema, found by the
 * facet's `_schemaURL`. A facet whose schema is not vendored is a failure, not a pass.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'openlineage');
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

type Json = Record<string, unknown>;

export interface EventCheck {
  /** One line per problem: where in the event and what is wrong; empty when valid. */
  errors: string[];
}

export function openLineageValidator(): (event: unknown) => EventCheck {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const files = [
    join(DIR, 'OpenLineage.json'),
    ...readdirSync(join(DIR, 'facets')).map((f) => join(DIR, 'facets', f)),
    // the program's own run facet, published beside its docs
    join(DIR, '..', '..', '..', 'docs', 'reference', 'PerksRunFacet.json'),
  ];
  for (const f of files) ajv.addSchema(JSON.parse(readFileSync(f, 'utf8')) as Json);
  const spec = ajv.getSchema('https://openlineage.io/spec/2-0-2/OpenLineage.json')!;
  const facetValidators = new Map<string, ValidateFunction>();
  const facetSchema = (url: string): ValidateFunction | undefined => {
    if (!facetValidators.has(url)) {
      const v = ajv.getSchema(url); // `<$id>#/$defs/<Facet>`
      if (v) facetValidators.set(url, v);
    }
    return facetValidators.get(url);
  };
  const describe = (v: ValidateFunction) => (v.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('; ');
  return (event) => {
    const errors: string[] = [];
    if (!spec(event)) errors.push(`event: ${describe(spec)}`);
    for (const { path, facet } of facetsOf(event as Json)) {
      const url = String(facet._schemaURL);
      const v = facetSchema(url);
      if (!v) errors.push(`${path}: no vendored schema for ${url}`);
      else if (!v(facet)) errors.push(`${path}: ${describe(v)}`);
    }
    return { errors };
  };
}

/** Every facet of an event, with where it is. */
export function facetsOf(event: Json): { path: string; facet: Json }[] {
  const found: { path: string; facet: Json }[] = [];
  const add = (path: string, facets: unknown) => {
    for (const [k, v] of Object.entries((facets ?? {}) as Record<string, Json>))
      found.push({ path: `${path}.${k}`, facet: v });
  };
  add('run.facets', (event.run as Json | undefined)?.facets);
  add('job.facets', (event.job as Json | undefined)?.facets);
  for (const side of ['inputs', 'outputs'] as const)
    ((event[side] ?? []) as Json[]).forEach((d, i) => {
      add(`${side}[${i}].facets`, d.facets);
      add(`${side}[${i}].inputFacets`, d.inputFacets);
      add(`${side}[${i}].outputFacets`, d.outputFacets);
    });
  return found;
}
