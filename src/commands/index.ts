/** Every CLI command, one module each. */
import type { CommandModule } from 'yargs';
import { extractCommand } from './extract.js';

export const commands: CommandModule<any, any>[] = [extractCommand];
