/** `perks models`: the data dictionary (grain, key, dependencies, tests, columns), also <out>/docs/models.md. */
import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { ConfigError } from '../shared/exit-codes.js';
import { snakeJson } from '../shared/json-keys.js';
import { describeModels, renderMarkdown, writeDictionary } from '../transform/index.js';
import { handle } from './handle.js';
import { configFromFlags, outputOf, type OutputFlags } from './options.js';
import { writeLineagePicture } from '../lineage/index.js';

interface ModelsFlags extends OutputFlags {
  format?: string;
}

export const modelsCommand: CommandModule<object, ModelsFlags> = {
  command: 'models',
  describe: 'List the SQL models with grain, columns and dependencies (also written to <out>/docs/models.md)',
  builder: (y) =>
    y
      .option('format', { alias: 'f', type: 'string', describe: 'md or json', default: 'md' })
      .example('$0 models', 'the data dictionary as Markdown'),
  handler: (argv) =>
    handle(async () => {
      if (argv.format !== 'md' && argv.format !== 'json')
        throw new ConfigError(`--format=${JSON.stringify(argv.format)} is invalid: expected md or json`);
      configFromFlags(argv); // the settings checked, as every command checks them (a bad one: exit 2)
      const docs = await describeModels();
      // the dictionary, and beside it the lineage drawn (lineage.svg), which it links to
      const { docs: folder } = outputOf(argv);
      writeLineagePicture(join(folder, 'lineage.svg'), docs);
      writeDictionary(join(folder, 'models.md'), docs, 'lineage.svg');
      // JSON keys in snake_case (depends_on), as every JSON the CLI prints
      process.stdout.write(argv.format === 'json' ? `${snakeJson(docs, {}, 2)}\n` : renderMarkdown(docs));
    }),
};
