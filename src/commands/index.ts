/** Every CLI command, one module each. */
import type { CommandModule } from 'yargs';

export const commands: CommandModule<any, any>[] = [];
