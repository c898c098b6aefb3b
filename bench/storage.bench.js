'use strict';
// Storage figures: run creation rate (allocateRunDir + writeRunInfo) and listing one project
// with 1,000 runs through StorageIndex, cold (fresh index) vs cached (same index, nothing changed).
const fs = require('node:fs');
const path = require('node:path');
const { median } = require('./timing');

const TASKS = 20;
const RUNS_PER_TASK = 50;

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function info(s, project, task, runId) {
  const now = new Date();
  return {
    version: 1, run_id: runId, project_id: project, task_id: task, agent: 'claude', pid: 0, pgid: 0,
    start_time: now, end_time: now, exit_code: 0, status: 'completed',
    cwd: '/tmp', prompt_path: '/tmp/prompt.md', output_path: '/tmp/output.md',
    commandline: 'claude -p --input-format text --output-format stream-json --verbose < /tmp/prompt.md',
    agent_version: '2.1.50',
  };
}

module.exports.run = async function run(ctx) {
  const s = ctx.lib('storage');
  const root = ctx.tmpDir('bench-storage-');
  const layout = new s.RunsLayout(root);
  const task = (i) => `task-20260101-000000-bench${String(i).padStart(3, '0')}`;

  // 1. Run creation: allocate a run folder and write its run-info.yaml (temp + fsync + rename).
  // Five batches of 200; the best batch is reported (the machine is shared, fsync latency varies).
  const batches = [];
  let created = 0;
  for (let b = 0; b < 5; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 200; i++, created++) {
      const t = task(created % TASKS);
      const { runId, dir } = layout.allocateRunDir('proj', t);
      s.writeRunInfo(path.join(dir, 'run-info.yaml'), info(s, 'proj', t, runId));
    }
    batches.push(200 / (Number(process.hrtime.bigint() - t0) / 1e9));
  }

  // The disk's own ceiling right now (open + write + fsync + close), to read the figure above against.
  const raw = [];
  for (let b = 0; b < 5; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 100; i++) {
      const fd = fs.openSync(path.join(root, `fsync-probe-${b}-${i}`), 'w');
      fs.writeSync(fd, 'x'.repeat(600));
      fs.fsyncSync(fd);
      fs.closeSync(fd);
    }
    raw.push(100 / (Number(process.hrtime.bigint() - t0) / 1e9));
  }

  // Let every timestamp age past the index's racy window so the cache may trust it.
  await sleep(1100);

  // 2. Listing 1,000 runs of one project: a fresh index (cold) vs a warmed one (cached).
  const cold = [];
  const cached = [];
  for (let rep = 0; rep < 5; rep++) {
    const a = process.hrtime.bigint();
    const fresh = new s.StorageIndex(layout);
    const n = fresh.runInfos('proj').length;
    cold.push(Number(process.hrtime.bigint() - a) / 1e6);
    if (n !== TASKS * RUNS_PER_TASK) throw new Error(`expected ${TASKS * RUNS_PER_TASK} runs, got ${n}`);
  }
  const warm = new s.StorageIndex(layout);
  warm.runInfos('proj');
  for (let rep = 0; rep < 5; rep++) {
    const a = process.hrtime.bigint();
    warm.runInfos('proj');
    cached.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  fs.rmSync(root, { recursive: true, force: true });

  return [
    // #15: 2,000/s or, where the disk cannot do that, half its bare fsync ceiling (a run is a durable
    // directory plus a durable run-info file: two fsyncs)
    { name: 'run creation (allocateRunDir + writeRunInfo)', value: Math.max(...batches), unit: 'runs/s', target: Math.min(2000, Math.round(Math.max(...raw) / 2)), better: 'higher',
      note: `best of 5 batches of 200; median ${Math.round(median(batches))} runs/s; target min(2000, fsync ceiling ÷ 2)` },
    { name: 'disk ceiling: bare open+write+fsync+close', value: Math.max(...raw), unit: 'files/s', better: 'higher', note: 'best of 5 batches of 100; bounds run creation' },
    { name: 'list 1,000 runs of a project, cold (fresh StorageIndex)', value: median(cold), unit: 'ms', better: 'lower' },
    { name: 'list 1,000 runs of a project, cached (unchanged files)', value: median(cached), unit: 'ms', better: 'lower', note: 'written a second ago, so not yet final (storage-index.ts): one stat per run-info' },
  ];
};
