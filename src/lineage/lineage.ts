/**
 * A command's lineage: where its events go (the settings' transport), what its output is called (datasets.ts),
 * and its job runs. `around` wraps a command's work: START before it, COMPLETE, FAIL or ABORT after it with
 * what it read and wrote, then every event settled (a collector down costs one warning line, never the work's
 * exit code or output). Lineage not configured: nothing is sent, and nothing else changes.
 */
import { lineageTransportOf, type Config } from '../config/index.js';
import type { Output } from '../output/index.js';
import { describeModels, type BuildResult } from '../transform/index.js';
import { placeOf, type Place } from './datasets.js';
import { JobRun, type Ending, type JobOptions, type ParentRun } from './job-run.js';
import { emitterFor, SILENT, type Emitter } from './transport.js';
import { buildDatasets } from './build-datasets.js';

export class Lineage {
  private constructor(
    private readonly emitter: Emitter,
    readonly namespace: string,
    readonly place: Place,
    private readonly warn: (line: string) => void,
  ) {}

  /**
   * The lineage of a command: `config` its settings, `output` the folder worked in (with a store's URL,
   * s3://bucket/prefix, when that folder is a store's working copy, which names the bucket). A file transport
   * without its path: exit 2.
   */
  static of(
    config: Config,
    output: Output,
    warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
    /** false: this invocation sends nothing (`perks extract --plan` reads no data a catalog tracks). */
    wanted = true,
  ): Lineage {
    const transport = wanted ? lineageTransportOf(config) : { kind: 'none' as const };
    const place = placeOf(output.dir, output.store ?? output.dir, config.baseUrl);
    const namespace = transport.kind === 'none' ? config.openlineageNamespace : transport.namespace;
    return new Lineage(emitterFor(transport, warn), namespace, place, warn);
  }

  /** Whether events are sent (a describing that costs a read is done only then). */
  get enabled(): boolean {
    return this.emitter !== SILENT;
  }

  job(name: string, options: JobOptions): JobRun {
    return new JobRun(this.emitter, this.namespace, name, options, (m) => this.warn(`perks: warning: lineage: ${m}`));
  }

  /**
   * Runs a command's work as job `name`: START now (or, with `deferStart`, when the work calls `run.begin` with
   * its own run id: an extract's), the end its exit code says (the work sets `run.ending`), events settled.
   */
  async around<T>(
    name: string,
    work: (run: CommandRun) => Promise<T>,
    options: Partial<JobOptions> & { deferStart?: boolean } = {},
  ): Promise<T> {
    const run = new CommandRun(this.job(name, { jobType: 'COMMAND', ...options }));
    if (!options.deferStart) run.begin();
    let result: T;
    try {
      result = await work(run);
    } catch (err) {
      await run.job.fail(err);
      await this.flush();
      throw err;
    }
    // the work's exit code: as it says, or as it returns (a command that prints its result returns nothing: 0)
    await run.job.end(run.exitCode ?? (typeof result === 'number' ? result : 0), run.ending);
    await this.flush();
    return result;
  }

  /**
   * A build's ending: its datasets, and one run per model (the build's children) sent with it. `startedAt`: the
   * build's start, from which the models' times are counted.
   */
  buildEnding(run: JobRun, r: BuildResult, startedAt: Date): Ending {
    return {
      error: r.ok ? undefined : r.error,
      io: async () => {
        if (!this.enabled) return { inputs: [], outputs: [] };
        const described = await buildDatasets(this.place, r, await describeModels(), startedAt);
        const parent = run.asParent();
        for (const m of described.models) {
          const child = this.job(`${run.job.name}.${m.model}`, {
            jobType: 'MODEL',
            parent,
            runId: `${run.runId}/${m.model}`,
            startedAt: m.startedAt,
          });
          child.begin();
          await child.end(m.status === 'error' ? 1 : 0, { io: m.io, error: m.error, endedAt: m.endedAt });
        }
        return described.io;
      },
    };
  }

  /** Every event settled; the one warning line if any was not sent. */
  flush(): Promise<void> {
    return this.emitter.flush();
  }
}

/**
 * The steps of a `perks run`: each a job of its own (`run.<step>`), the run's child through the parent facet.
 * A step with a run id of its own (the extract's, the write-back's) starts when it has it.
 */
export class RunLineage {
  constructor(
    readonly lineage: Lineage,
    private readonly parent: ParentRun,
  ) {}

  get place(): Place {
    return this.lineage.place;
  }

  /** The job run of step `name`, started now unless `ownRunId` (then at `begin(runId)`). */
  step(name: string, ownRunId = false): JobRun {
    const run = this.lineage.job(`run.${name}`, { jobType: 'TASK', parent: this.parent });
    if (!ownRunId) run.begin();
    return run;
  }
}

/** The run of a command: its job run, and what the work says of itself when it ends. */
export class CommandRun {
  ending: Ending = {};
  /** The work's exit code, when it returns something else (a summary). */
  exitCode?: number;
  constructor(readonly job: JobRun) {}
  begin(runId?: string): void {
    this.job.begin(runId);
  }
  asParent(): ParentRun {
    return this.job.asParent();
  }
}
