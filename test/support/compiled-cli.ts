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
/** Builds kept in the cache (each of other sources: a checkout's earlier edits, or another checkout's). */
const KEPT_BUILDS = 3;

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
    // only the newest builds stay (another checkout sharing node_modules may run one of them); by their
    // times against each other, not against the clock
    const parent = dirname(dir);
    const builds = readdirSync(parent)
      .filter((name) => !name.includes('.tmp-'))
      .map((name) => ({ name, at: statSync(join(parent, name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
      .sort((a, b) => b.at - a.at);
    for (const { name } of builds.slice(KEPT_BUILDS)) rmSync(join(parent, name), { recursive: true, force: true });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return entry;
}
