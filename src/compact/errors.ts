/** Errors of compaction: one line, what was left as it was, exit code 1. */
import { LakeError } from '../lake/index.js';

/** A month that could not be compacted (a file that cannot be read, a checksum that differs): it is left as it was. */
export class CompactionError extends LakeError {}
