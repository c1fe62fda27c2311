/**
 * The `perks` command line compiled to JavaScript once, for the suite's hundreds of child processes.
 * bin/perks.mjs runs the TypeScript sources through tsx: on these 2 cores a start costs about 1.8 s and 2.7
 * CPU-s, of which tsx's loader is 0.8 s and 1.5 CPU-s. The same sources transpiled (TypeScript's own
 * transpileModule, file by file, as tsx does with esbuild: no type is checked and no import rewritten) start
 * in about 1.0 s.
 *
 * The build is kept under node_modules/.cache/perks-cli/<hash of the sources>/, so a changed source is never
 * run stale and `npm ci` starts afresh; it is written to a temporary folder and renamed into place, so two
 * test workers building at once both end with a whole one. Its `sql` is a link to the project's (the models
 * are read from `../../sql` relative to the code). Tests of the shipped entry point itself spawn bin/perks.mjs.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const FOLDERS = ['src', 'pipelines'];
/** A build of other sources is removed once this old (it is cache housekeeping, not a test's clock). */
const STALE_MS = 60 * 60 * 1000;

/** The path of the compiled `perks` entry for the sources under `root`, built when missing. */
export function compiledCli(root: string): string {
  const sources = FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => join(folder, f))
      .sort(),
  );
  const hash = createHash('sha256').update(ts.version);
  const texts = sources.map((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    hash.update(`\0${file}\0${text}`);
    return text;
  });
  const dir = join(root, 'node_modules', '.cache', 'perks-cli', hash.digest('hex').slice(0, 16));
  const entry = join(dir, 'perks.mjs');
  if (existsSync(entry)) return entry;

  const temp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    sources.forEach((file, i) => {
      const out = join(temp, file.replace(/\.ts$/, '.js'));
      mkdirSync(dirname(out), { recursive: true });
      const { outputText } = ts.transpileModule(texts[i], {
        fileName: file,
        compilerOptions: {
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.ESNext,
          verbatimModuleSyntax: false,
          isolatedModules: true,
        },
      });
      writeFileSync(out, outputText);
    });
    writeFileSync(join(temp, 'package.json'), '{ "type": "module" }\n');
    symlinkSync(join(root, 'sql'), join(temp, 'sql'), 'dir');
    // written last: its presence says the build is whole
    writeFileSync(join(temp, 'perks.mjs'), "await import('./src/cli.js');\n");
    try {
      renameSync(temp, dir);
    } catch (err) {
      // another worker's build got there first: the same sources, the same files
      if (!existsSync(entry)) throw err;
    }
    // builds of other sources untouched for an hour are gone (another checkout sharing node_modules may be
    // running a newer one; a build of these sources may still be in the making)
    const parent = dirname(dir);
    const mine = dir.slice(parent.length + 1);
    for (const name of readdirSync(parent))
      if (!name.startsWith(mine) && statSync(join(parent, name)).mtimeMs < Date.now() - STALE_MS)
        rmSync(join(parent, name), { recursive: true, force: true });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return entry;
}
