/**
 * The OpenLineage run event as this program sends it (spec 2-0-2, https://openlineage.io/spec/2-0-2/OpenLineage.json):
 * the shapes, and the schema URLs of the spec and of each facet it fills. test/fixtures/openlineage/ holds the
 * schemas, and a test checks every event against them.
 */
export const SPEC_URL = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';

/** Each facet's schema, at the version the events follow. */
export const FACET_SCHEMAS = {
  jobType: 'https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet',
  processingEngine:
    'https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet',
  parent: 'https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet',
  errorMessage: 'https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet',
  schema: 'https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet',
  outputStatistics:
    'https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet',
  dataQualityAssertions:
    'https://openlineage.io/spec/facets/1-0-2/DataQualityAssertionsDatasetFacet.json#/$defs/DataQualityAssertionsDatasetFacet',
  /** This program's own run facet (docs/reference/lineage-perks-run-facet.json). */
  perksRun: 'urn:perks-pipeline:spec:facets:1-0-0:PerksRunFacet.json#/$defs/PerksRunFacet',
} as const;

export type EventType = 'START' | 'COMPLETE' | 'FAIL' | 'ABORT';

export interface Facet {
  _producer: string;
  _schemaURL: string;
  [field: string]: unknown;
}

export type Facets = Record<string, Facet>;

export interface Dataset {
  namespace: string;
  name: string;
  facets?: Facets;
}

export interface OutputDataset extends Dataset {
  outputFacets?: Facets;
}

export interface JobRef {
  namespace: string;
  name: string;
}

export interface RunEvent {
  eventType: EventType;
  eventTime: string;
  run: { runId: string; facets?: Facets };
  job: JobRef & { facets?: Facets };
  inputs: Dataset[];
  outputs: OutputDataset[];
  producer: string;
  schemaURL: string;
}

/** What a job read and wrote, as datasets. */
export interface DatasetIo {
  inputs: Dataset[];
  outputs: OutputDataset[];
}

export const NO_DATASETS: DatasetIo = { inputs: [], outputs: [] };
