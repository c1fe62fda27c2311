/**
 * One job's run as OpenLineage sees it: one START, then one COMPLETE, FAIL or ABORT, with the same run id (the
 * UUID of the program's own run id, run-id.ts). A command's work describes what it read and wrote (a DatasetIo,
 * or a function making one after the work); the description failing costs the datasets, never the work.
 */
import { now } from '../shared/clock.js';
import { newRunId } from '../shared/run-id.js';
import { ExitCode } from '../shared/exit-codes.js';
import type { DatasetIo, EventType, Facets, JobRef, RunEvent } from './events.js';
import { NO_DATASETS, SPEC_URL } from './events.js';
import {
  errorMessageFacet,
  jobTypeFacet,
  parentFacet,
  perksRunFacet,
  processingEngineFacet,
  producer,
} from './facets.js';
import { lineageRunId } from './run-id.js';
import type { Emitter } from './transport.js';

/** A run that started another: its job and run id, and the root of them all. */
export interface ParentRun {
  job: JobRef;
  runId: string;
  root?: { job: JobRef; runId: string };
}

export interface JobOptions {
  /** COMMAND: a command; TASK: a step of `perks run`; MODEL: a model of a build. */
  jobType: 'COMMAND' | 'TASK' | 'MODEL';
  parent?: ParentRun;
  /** The program's run id, when the work has one already (a write-back's, a build's model's). */
  runId?: string;
  /** When the run started (by the program's clock): now unless said. */
  startedAt?: Date;
}

/** What the work says of itself when it ends. */
export interface Ending {
  /** The datasets it read and wrote (or a function making them: called once, its failure costs only them). */
  io?: DatasetIo | (() => DatasetIo | Promise<DatasetIo>);
  /** A failure's message (an exit code 1 without an error thrown: a build that failed, say). */
  error?: string;
  /** When it ended: now unless said. */
  endedAt?: Date;
}

export class JobRun {
  readonly job: JobRef;
  private perksRunId?: string;
  private started = false;
  private ended = false;
  private readonly startedAt: Date;

  constructor(
    private readonly emitter: Emitter,
    namespace: string,
    name: string,
    private readonly options: JobOptions,
    private readonly onIoError: (message: string) => void,
  ) {
    this.job = { namespace, name };
    this.perksRunId = options.runId;
    this.startedAt = options.startedAt ?? now();
  }

  /** The program's run id of this run (made now if the work gave none). */
  get runId(): string {
    return (this.perksRunId ??= newRunId(`${this.job.name.replace(/[^a-z0-9]+/gi, '-')}-`, this.startedAt));
  }

  /** Its parent facet's view of it, for the runs it starts. */
  asParent(): ParentRun {
    const self = { job: this.job, runId: lineageRunId(this.runId) };
    return { ...self, root: this.options.parent?.root ?? this.options.parent ?? self };
  }

  /** Sends START, once, with `runId` as the program's run id when the work has just made one (an extract's). */
  begin(runId?: string): void {
    if (this.started) return;
    if (runId && !this.perksRunId) this.perksRunId = runId;
    this.started = true;
    this.emitter.emit(this.event('START', this.startedAt, NO_DATASETS));
  }

  /**
   * Sends the end the exit code says, once: 0 and 4 (partial: data was written) COMPLETE, 5 ABORT (another run
   * held the output: nothing was done), any other FAIL (with the exit code as its message when none is given).
   */
  async end(exitCode: number, ending: Ending = {}): Promise<void> {
    const complete = exitCode === ExitCode.success || exitCode === ExitCode.partial;
    const type: EventType = complete ? 'COMPLETE' : exitCode === ExitCode.locked ? 'ABORT' : 'FAIL';
    await this.finish(type, complete ? ending : { ...ending, error: ending.error ?? `exit code ${exitCode}` });
  }

  /** Sends FAIL for an error the work threw (its message redacted in the facet). */
  async fail(err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as { exitCode?: number }).exitCode;
    await this.finish(code === ExitCode.locked ? 'ABORT' : 'FAIL', { error: message });
  }

  private async finish(type: EventType, ending: Ending): Promise<void> {
    if (this.ended) return;
    this.begin();
    this.ended = true;
    const io = await this.datasets(ending.io);
    const extra: Facets = ending.error && type !== 'COMPLETE' ? { errorMessage: errorMessageFacet(ending.error) } : {};
    this.emitter.emit(this.event(type, ending.endedAt ?? now(), io, extra));
  }

  private async datasets(io: Ending['io']): Promise<DatasetIo> {
    try {
      return (typeof io === 'function' ? await io() : io) ?? NO_DATASETS;
    } catch (err) {
      this.onIoError(`${this.job.name}: its datasets could not be described: ${(err as Error).message}`);
      return NO_DATASETS;
    }
  }

  private event(type: EventType, at: Date, io: DatasetIo, extra: Facets = {}): RunEvent {
    const { parent } = this.options;
    return {
      eventType: type,
      eventTime: at.toISOString(),
      run: {
        runId: lineageRunId(this.runId),
        facets: {
          processing_engine: processingEngineFacet(),
          perks_run: perksRunFacet(this.runId, this.job.name),
          ...(parent ? { parent: parentFacet(parent, parent.root ?? parent) } : {}),
          ...extra,
        },
      },
      job: { ...this.job, facets: { jobType: jobTypeFacet(this.options.jobType) } },
      inputs: io.inputs,
      outputs: io.outputs,
      producer: producer(),
      schemaURL: SPEC_URL,
    };
  }
}
