/**
 * When an extract's progress is published (a checkpoint): every `seconds` or `mb` landed since the last
 * publish, whichever first (0: never); one checkpoint at a time.
 */
export interface CheckpointSettings {
  seconds: number;
  mb: number;
}

export class Checkpoints {
  /** Since the last publish: when it was, and the bytes the extract landed since. */
  private since = { at: Date.now(), bytes: 0 };
  private running = false;

  constructor(private readonly settings: CheckpointSettings = { seconds: 0, mb: 0 }) {}

  /** A publish happened (or the command starts): the interval counts from now. */
  reset(): void {
    this.since = { at: Date.now(), bytes: 0 };
  }

  /** `bytes` more landed: runs `publish` when the interval says so and no checkpoint is running. */
  async landed(bytes: number, publish: () => Promise<unknown>): Promise<void> {
    this.since.bytes += bytes;
    const { seconds, mb } = this.settings;
    const due =
      (seconds > 0 && Date.now() - this.since.at >= seconds * 1000) || (mb > 0 && this.since.bytes >= mb * 1024 * 1024);
    if (!due || this.running) return;
    this.running = true;
    try {
      await publish();
    } finally {
      this.running = false;
    }
  }
}
