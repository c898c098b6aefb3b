'use strict';
// The fan-out governor's tree count per child start (issue #33): a tree of 50 children next to
// 1000 finished runs of other tasks. The count reads the tree's ledger (TREE-RUNS); the baseline
// is what it replaced, three scans of every run under the root per child start (the pre-check,
// finding the tree's top task, the count under FANOUT.lock).
const path = require('node:path');
const { seedFinishedRuns } = require('./run-fixtures');

module.exports.run = async (ctx) => {
  const storage = ctx.lib('storage');
  const runner = ctx.lib('runner');
  const scan = require(path.join(ctx.root, 'dist', 'apps', 'cli', 'libs', 'runner', 'src', 'run-scan.js'));
  const root = path.join(ctx.tmpDir('bench-fanout-'), 'runs');
  seedFinishedRuns(storage, root, 'bench');
  const layout = new storage.RunsLayout(root);
  const task = 'task-20260101-000000-tree';
  const taskDir = layout.taskDir('bench', task);
  const make = (parent) => {
    const { runId, dir } = layout.allocateRunDir('bench', task);
    if (!parent) runner.startTreeLedger(dir);
    storage.writeRunInfo(path.join(dir, 'run-info.yaml'), {
      version: 1, run_id: runId, parent_run_id: parent, project_id: 'bench', task_id: task, agent: 'claude', pid: 0, pgid: 0,
      start_time: new Date(), end_time: storage.ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
    });
    return { runId, runDir: dir };
  };
  const top = make(undefined);
  for (let i = 0; i < 50; i++) await runner.admitChild(root, taskDir, top.runId, {}, () => make(top.runId));
  const perCall = (f, n) => {
    f();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f();
    return Number(process.hrtime.bigint() - t0) / 1e6 / n;
  };
  const count = () => runner.countTreeRuns(root, runner.treeOf(root, top.runId, [taskDir]));
  if (count() !== 51) throw new Error(`tree count ${count()}, expected 51`);
  const ledger = perCall(count, 50);
  const scans = perCall(() => {
    for (let k = 0; k < 3; k++) scan.descendantRuns(scan.allRuns(root), top.runId);
  }, 5);
  return [
    { name: 'fan-out tree count per child start (50-run tree, 1000 other runs)', value: ledger, unit: 'ms', target: 5, better: 'lower', note: `baseline: the three scans of every run it replaced ${scans.toFixed(1)} ms` },
  ];
};
