#!/usr/bin/env node
// Checks that every import of src/, pipelines/ and bench/ runs down the layers of docs/dev/architecture.md (the
// ```layers block there is the rule: a file imports its own folder and the folders of the layers below its own),
// that no folders and no files import each other in a circle, and that every folder is in a layer; inside
// src/sandbox, that its folders import one way (SANDBOX_LAYERS); that the lake's layout (its paths, partition
// folder names, read_parquet) is known in src/lake only, and the environment read in src/config only (ENV_READERS:
// the exceptions, each with its reason).
// Prints one line per finding, `file: import 'specifier': rule`, and exits 1 when there is any.
// Usage: node scripts/check-layers.mjs [ROOT]   (default: the repository)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(process.argv[2] ?? join(import.meta.dirname, '..'));
const DOC = 'docs/dev/architecture.md';
const ROOTS = ['src', 'pipelines', 'bench'];
/** What bench/ may import outside the layers: the test helpers. */
const BENCH_MAY_IMPORT = 'test/support/';
/**
 * Inside src/sandbox, top first: the transport (routing, auth, rate limit, faults, replies) calls the API's
 * operations, which work on the world. A folder imports the folders below it, never one above; the modules
 * beside them (choices, errors, options, json/, …) are below all three, and server.ts and index.ts above.
 */
const SANDBOX_LAYERS = [
  ['src/sandbox/http/', 'transport'],
  ['src/sandbox/ops/', 'operations'],
  ['src/sandbox/world/', 'world'],
];
const SANDBOX_ENTRIES = ['src/sandbox/server.ts', 'src/sandbox/index.ts'];
/**
 * The environment is read in src/config only (one schema, every setting parsed once and passed down); these
 * files may read it too, each for its reason.
 */
const ENV_READERS = {
  'src/shared/clock.ts': 'PERKS_NOW: the one clock is in the base layer, below src/config, read before any command',
  'src/shared/crash-points.ts': 'PERKS_CRASH_AT: test-only crash points, armed before any command',
  'src/report/render/pdf.ts':
    "PATH: the system's executable search path Chromium is looked up on, not a setting (PERKS_CHROMIUM is src/config's)",
};

/**
 * The lake's partition keys (src/lake: streams.ts, partitions.ts, month-layout.ts): a folder name built or parsed
 * from one of them (`organisation_group_id=…`) outside src/lake is a finding; src/lake/partitions.ts has the verbs.
 */
const PARTITION_KEYS = ['organisation_group_id', 'order_month', 'order_date', '_snapshot_month', '_snapshot_date'];
/**
 * Files that may call `read_parquet` outside src/lake, each for its reason: what they read is not the lake (a read
 * of the lake goes through src/lake/streams.ts: scanSql, scanFilesSql).
 */
const PARQUET_READERS = {
  'src/writeback/models.ts': 'the marts a build exported under <out>/marts, not the lake',
  'src/transform/warehouse/seed.ts': "the store's warehouse pieces, not the lake",
};

const layers = readLayers(join(ROOT, DOC));
const layerOf = new Map(layers.flatMap((l, depth) => l.units.map((u) => [u, { name: l.name, depth }])));
const findings = [];
const report = (file, spec, rule) => findings.push(`${file}: import '${spec}': ${rule}`);

const files = ROOTS.flatMap((r) => sourcesUnder(join(ROOT, r))).map((f) => rel(f));
const edges = new Map(files.map((f) => [f, new Set()]));
const unitEdges = new Map();
const unplaced = new Set();

for (const file of files) {
  const from = unitOf(file);
  const fromLayer = layerOf.get(from);
  if (!fromLayer) unplaced.add(from);
  for (const spec of importsOf(readFileSync(join(ROOT, file), 'utf8'))) {
    if (!spec.startsWith('.')) continue; // a package or node: module
    const target = resolveImport(file, spec);
    if (target.startsWith('test/')) {
      if (!(from === 'bench/' && target.startsWith(BENCH_MAY_IMPORT)))
        report(file, spec, `only bench/ may import test code, and only ${BENCH_MAY_IMPORT} (${DOC})`);
      continue;
    }
    if (edges.has(target)) edges.get(file).add(target);
    const to = unitOf(target);
    const upInSandbox = sandboxClimb(file, target);
    if (upInSandbox) report(file, spec, upInSandbox);
    if (to === from) continue;
    if (!unitEdges.has(from)) unitEdges.set(from, new Map());
    if (!unitEdges.get(from).has(to)) unitEdges.get(from).set(to, { file, spec });
    const toLayer = layerOf.get(to);
    if (!toLayer) {
      unplaced.add(to);
      continue;
    }
    if (!fromLayer) continue;
    if (toLayer.depth === fromLayer.depth)
      report(file, spec, `${from} and ${to} are both ${fromLayer.name}: a folder does not import one of its own layer`);
    else if (toLayer.depth > fromLayer.depth)
      report(file, spec, `runs back up: ${from} (${fromLayer.name}) imports ${to} (${toLayer.name}), a layer above it`);
  }
}
for (const unit of [...unplaced].sort())
  findings.push(`${unit}: in no layer of ${DOC}: add it to the layers there (and say which may import it)`);
findings.push(...files.flatMap((file) => lakeLayoutOutside(file, readFileSync(join(ROOT, file), 'utf8'))));
findings.push(...files.flatMap((file) => environmentOutside(file, readFileSync(join(ROOT, file), 'utf8'))));
for (const circle of circles(new Map([...unitEdges].map(([u, m]) => [u, new Set(m.keys())]))))
  findings.push(
    `circle between folders: ${circle.join(' -> ')} -> ${circle[0]} (${circle
      .map((u, i) => unitEdges.get(u).get(circle[(i + 1) % circle.length]))
      .map((e) => `${e.file} imports '${e.spec}'`)
      .join('; ')})`,
  );
for (const circle of circles(edges)) findings.push(`circle between files: ${circle.join(' -> ')} -> ${circle[0]}`);

if (findings.length) {
  process.stdout.write(`${findings.join('\n')}\n`);
  process.stderr.write(`check-layers: ${findings.length} finding(s) against the layers of ${DOC}\n`);
  process.exit(1);
}
const between = [...unitEdges.values()].reduce((n, m) => n + m.size, 0);
process.stdout.write(
  `check-layers: ${files.length} files, ${between} arrows between folders, all down the ${layers.length} layers of ${DOC}, no circle\n`,
);

/** The ```layers block: one layer a line, top first, `name unit unit …` (a unit is a folder/ or a file). */
function readLayers(path) {
  const text = readFileSync(path, 'utf8');
  const block = /```layers\n([\s\S]*?)```/.exec(text);
  if (!block) {
    process.stderr.write(`check-layers: ${DOC} has no \`\`\`layers block\n`);
    process.exit(2);
  }
  return block[1]
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((w) => w[0])
    .map(([name, ...units]) => ({ name, units }))
    .reverse(); // depth 0 is the base
}

/** The unit a file belongs to: src/<folder>/, or a file directly in src/, or the top folder (pipelines/, bench/). */
function unitOf(file) {
  const parts = file.split('/');
  if (parts[0] !== 'src') return `${parts[0]}/`;
  return parts.length > 2 ? `src/${parts[1]}/` : file;
}

/** Where a sandbox file sits in SANDBOX_LAYERS: a higher number is further up (entries top, shared modules 0). */
function sandboxDepth(file) {
  if (SANDBOX_ENTRIES.includes(file)) return SANDBOX_LAYERS.length + 1;
  const i = SANDBOX_LAYERS.findIndex(([folder]) => file.startsWith(folder));
  return i < 0 ? 0 : SANDBOX_LAYERS.length - i;
}

/** The rule an import from one sandbox file to another breaks when it runs back up SANDBOX_LAYERS, or null. */
function sandboxClimb(file, target) {
  if (!file.startsWith('src/sandbox/') || !target.startsWith('src/sandbox/')) return null;
  const [fromDepth, toDepth] = [sandboxDepth(file), sandboxDepth(target)];
  if (toDepth <= fromDepth) return null;
  const name = (depth, path) => {
    const layer = SANDBOX_LAYERS[SANDBOX_LAYERS.length - depth];
    return `${layer ? layer[0] : path} (${depth === 0 ? 'shared' : layer ? layer[1] : 'entry'})`;
  };
  return `runs back up inside src/sandbox: ${name(fromDepth, file)} imports ${name(toDepth, target)}, a layer above it`;
}

/**
 * The lake's layout is known in src/lake only (src/lake/streams.ts: streamDir, streamGlob, relativeStreamDir,
 * scanSql; src/lake/partitions.ts: the partitions as verbs): a path built from a 'lake' segment, a
 * `hive_partitioning` read, a partition folder name or a `read_parquet` (but PARQUET_READERS') anywhere else is
 * a finding.
 */
function lakeLayoutOutside(file, source) {
  // src/store maps every path of the output to objects by its top folders (lake/, state/ …); the sandbox has no lake
  if (!file.startsWith('src/') || /^src\/(lake|store|sandbox)\//.test(file)) return [];
  const code = (line) => !/^\s*(\*|\/\/|\/\*)/.test(line);
  const path = /\b(?:join|resolve)\([^)]*['"`]lake['"`]|['"`]lake\//;
  const folder = new RegExp(`\\b(?:${PARTITION_KEYS.join('|')})=`);
  const rule = (line) => {
    if (path.test(line) || /hive_partitioning/.test(line))
      return "the lake's layout outside src/lake: read it through src/lake/streams.ts (streamDir, streamGlob, scanSql)";
    if (folder.test(line))
      return 'a partition folder name outside src/lake: list, read and land partitions through src/lake/partitions.ts (streamFiles, groupsOf, snapshotsOf, monthPartitions, appendPartition)';
    if (/\bread_parquet\s*\(/.test(line) && !(file in PARQUET_READERS))
      return 'read_parquet outside src/lake: read the lake through src/lake/streams.ts (scanSql, scanFilesSql), or name the file and what it reads in PARQUET_READERS (scripts/check-layers.mjs)';
    return undefined;
  };
  return source.split('\n').flatMap((line, i) => {
    const broken = code(line) ? rule(line) : undefined;
    return broken ? [`${file}:${i + 1}: ${broken}`] : [];
  });
}

/** `process.env` in src/ or pipelines/ outside src/config (and the ENV_READERS) is a finding: settings come from src/config. */
function environmentOutside(file, source) {
  if (file.startsWith('bench/') || file.startsWith('src/config/') || file in ENV_READERS) return [];
  const code = (line) => !/^\s*(\*|\/\/|\/\*)/.test(line);
  return source
    .split('\n')
    .flatMap((line, i) =>
      code(line) && /\bprocess\.env\b/.test(line)
        ? [
            `${file}:${i + 1}: process.env outside src/config: add the setting to ConfigSchema (src/config) and pass it down`,
          ]
        : [],
    );
}

function importsOf(source) {
  const specs = [];
  const statement = /^\s*(?:import|export)\s+[\w\s{},*$]*?\bfrom\s*['"]([^'"]+)['"]/gm;
  const bare = /^\s*import\s*['"]([^'"]+)['"]/gm;
  const dynamic = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const re of [statement, bare, dynamic]) for (const m of source.matchAll(re)) specs.push(m[1]);
  return [...new Set(specs)];
}

function resolveImport(file, spec) {
  const target = rel(resolve(ROOT, dirname(file), spec));
  const ts = target.replace(/\.js$/, '.ts');
  return existsSync(join(ROOT, ts)) ? ts : target;
}

function sourcesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => /\.(ts|mts)$/.test(f) && !f.endsWith('.d.ts') && statSync(f).isFile())
    .sort();
}

function rel(path) {
  return relative(ROOT, path).split(sep).join('/');
}

/** Every strongly connected set of more than one node (Tarjan), each as one circle through it. */
function circles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const members = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      members.push(w);
    } while (w !== v);
    if (members.length > 1) found.push(pathThrough(graph, new Set(members)));
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** A circle inside a strongly connected set, from its first member (in name order) back to it. */
function pathThrough(graph, members) {
  const start = [...members].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [];
        for (let u = v; u !== null; u = previous.get(u)) path.unshift(u);
        return path;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}
