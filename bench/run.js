'use strict';
// `npm run bench`: runs every bench/*.bench.js against the built code (dist/), prints a table and
// writes bench/results/latest.json (plus a timestamped copy).
//
// A bench file exports `async function run(ctx)` returning an array of figures:
//   { name, value, unit, target?, better: 'higher' | 'lower', note? }
// ctx = { root, lib(name) -> require of the built lib barrel, tmpDir(prefix) -> fresh temp dir,
//         bin(name) -> absolute path of bin/<name> }
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const distLibs = path.join(root, 'dist', 'apps', 'cli', 'libs');
if (!fs.existsSync(distLibs)) {
  console.error('bench: build first (npm run build)');
  process.exit(1);
}
const tmpDirs = [];
const ctx = {
  root,
  lib: (name) => require(path.join(distLibs, name, 'src')),
  tmpDir: (prefix = 'bench-') => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    tmpDirs.push(d);
    return d;
  },
  bin: (name) => path.join(root, 'bin', name),
};

/** value ÷ target: ≤ 1 meets a 'lower' target, ≥ 1 a 'higher' one. */
function ratioOf(f) {
  return f.target === undefined || f.target === 0 ? undefined : f.value / f.target;
}

function meets(f) {
  if (f.target === undefined) return '';
  const ok = f.better === 'lower' ? f.value <= f.target : f.value >= f.target;
  return ok ? 'ok' : 'MISSED';
}

async function main() {
  const only = process.argv.slice(2);
  const files = fs.readdirSync(__dirname).filter((f) => f.endsWith('.bench.js'))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o))).sort();
  const results = [];
  for (const file of files) {
    process.stdout.write(`\n## ${file}\n`);
    const figures = await require(path.join(__dirname, file)).run(ctx);
    for (const f of figures) {
      const status = meets(f);
      const ratio = ratioOf(f);
      results.push({ file, ...f, ratio, status });
      const times = ratio === undefined ? '' : `; ${Number(ratio.toFixed(2))}× target`;
      const target = f.target === undefined ? '' : ` (target ${f.better === 'lower' ? '≤' : '≥'} ${f.target}${times})`;
      console.log(`${f.name}: ${Number(f.value.toFixed(3))} ${f.unit}${target} ${status}${f.note ? ` — ${f.note}` : ''}`);
    }
  }
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
  const out = { at: new Date().toISOString(), node: process.version, cpus: os.cpus().length, results };
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const json = JSON.stringify(out, null, 2) + '\n';
  fs.writeFileSync(path.join(dir, 'latest.json'), json);
  fs.writeFileSync(path.join(dir, `bench-${out.at.replace(/[:.]/g, '-')}.json`), json);
  const missed = results.filter((r) => r.status === 'MISSED').length;
  console.log(`\n${results.length} figures, ${missed} missed targets; written to bench/results/latest.json`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
