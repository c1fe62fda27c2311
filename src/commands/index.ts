/** Every CLI command, one module each. */
import type { CommandModule } from 'yargs';
import { alertCommand } from './alert.js';
import { buildCommand } from './build.js';
import { closeCommand, closesCommand, reopenCommand } from './close.js';
import { checkCommand } from './check.js';
import { compactCommand } from './compact.js';
import { demoCommand } from './demo.js';
import { extractCommand } from './extract.js';
import { forgetCommand } from './forget.js';
import { reportCommand } from './report.js';
import { modelsCommand } from './models.js';
import { runCommand } from './run.js';
import { sandboxCommand } from './sandbox.js';
import { sqlCommand } from './sql.js';
import { statusCommand } from './status.js';
import { writebackCommand } from './writeback.js';
import { usersCommand } from './users.js';
import { storeCommand } from './store.js';

/** Each command declares and checks its own flags; the list, which yargs cannot type, erases them. */
export const commands = [
  checkCommand,
  extractCommand,
  runCommand,
  demoCommand,
  reportCommand,
  sandboxCommand,
  writebackCommand,
  buildCommand,
  sqlCommand,
  modelsCommand,
  forgetCommand,
  usersCommand,
  statusCommand,
  compactCommand,
  closeCommand,
  reopenCommand,
  closesCommand,
  alertCommand,
  storeCommand,
] as unknown as CommandModule[];
