'use strict';
// 50 concurrent tasks in one process, and their floor: 50 bare concurrent spawns of the same agent
// with the one durable write each task makes (a run record: write, fsync, rename). Measured in a
// Node process of their own (runner.bench.js runs it), each round after `sync`: in the bench's
// shared process, the heaps of the benches before it made every spawn 2× slower, and the data they
// left unwritten made each fsync wait for it (docs/decisions.md, "Server idle memory"). Prints the
// medians of 3 as JSON.
//   node bench/runner-concurrency.js <dist libs folder> <temp folder>
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { median } = require('./timing');
const { commandConfig, engineParts, writeAgent } = require('./run-fixtures');

const [libs, dir] = process.argv.slice(2);
const runner = require(path.join(libs, 'runner', 'src'));
const parts = engineParts((name) => require(path.join(libs, name, 'src')));

const config = commandConfig(writeAgent(dir, 'fast-agent', 'cat >/dev/null\nsleep 0.01\n: > "$JRUN_TASK_FOLDER/DONE"\necho done'));
const bareAgent = writeAgent(dir, 'bare-agent', 'cat >/dev/null\nsleep 0.01\necho done');
let round = 0;

async function concurrentTasks() {
  const root = path.join(dir, `runs-${++round}`);
  const t0 = process.hrtime.bigint();
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => runner.runTask({ ...parts, root, projectId: 'bench', taskId: `task-20260101-000000-conc-${round}-${i}`, prompt: 'bench', config })),
  );
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const failed = results.filter((r) => r.status !== 'done').length;
  if (failed) throw new Error(`${failed} of 50 tasks did not finish`);
  return ms;
}

/** One durable record, as a task writes its run-info: temp file, write, fsync, rename. */
async function durableWrite(file) {
  const handle = await fs.promises.open(`${file}.tmp`, 'wx', 0o644);
  await handle.writeFile('bench\n');
  await handle.sync();
  await handle.close();
  await fs.promises.rename(`${file}.tmp`, file);
}

async function bareConcurrentSpawns() {
  const records = path.join(dir, `records-${++round}`);
  fs.mkdirSync(records);
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: 50 }, (_, i) => Promise.all([
    durableWrite(path.join(records, String(i))),
    new Promise((resolve) => {
      const child = spawn(bareAgent, [], { stdio: ['pipe', 'ignore', 'ignore'] });
      child.stdin.end('bench');
      child.on('exit', resolve);
    }),
  ])));
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

(async () => {
  await concurrentTasks(); // warm-up: module loading, first spawns
  const tasks = [];
  const floor = [];
  for (let i = 0; i < 3; i++) {
    spawnSync('sync');
    tasks.push(await concurrentTasks());
    spawnSync('sync');
    floor.push(await bareConcurrentSpawns());
  }
  process.stdout.write(JSON.stringify({ tasks: median(tasks), floor: median(floor) }));
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
