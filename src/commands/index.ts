/** Every CLI command, one module each. */
import type { CommandModule } from 'yargs';
import { checkCommand } from './check.js';
import { demoCommand } from './demo.js';
import { extractCommand } from './extract.js';
import { reportCommand } from './report.js';
import { runCommand } from './run.js';
import { sandboxCommand } from './sandbox.js';
import { writebackCommand } from './writeback.js';

export const commands: CommandModule<any, any>[] = [checkCommand, extractCommand, runCommand, demoCommand, reportCommand, sandboxCommand, writebackCommand];
