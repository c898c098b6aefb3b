'use strict';
// Runner benchmarks: many concurrent tasks in one process (runner-concurrency.js), restart
// overhead of the Ralph loop, and the CPU an idle `run-agent task` uses while it waits on a
// dependency.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { median } = require('./timing');
const { commandConfig, engineParts, writeAgent } = require('./run-fixtures');

const PROJECT = 'bench';
let seq = 0;
const taskId = (slug) => `task-20260101-000000-${slug}-${process.pid}-${++seq}`;

/** 50 concurrent tasks and their floor, in a Node process of their own (runner-concurrency.js). */
function concurrency(ctx) {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'runner-concurrency.js'), path.join(ctx.root, 'dist', 'apps', 'cli', 'libs'), ctx.tmpDir('runner-bench-')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`runner-concurrency.js exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Spawn → first instruction of a sh agent, median of 11: what any restart must pay. */
async function bareSpawnLatency(ctx) {
  const dir = ctx.tmpDir('runner-bench-');
  const stamp = path.join(dir, 'stamp');
  const agent = writeAgent(dir, 'stamp-agent', `date +%s%N > "${stamp}"`);
  const gaps = [];
  for (let i = 0; i < 11; i++) {
    const t0 = BigInt(Date.now()) * 1000000n;
    await new Promise((resolve) => spawn(agent, [], { stdio: 'ignore' }).on('exit', resolve));
    gaps.push(Number(BigInt(fs.readFileSync(stamp, 'utf8').trim()) - t0) / 1e6);
  }
  return median(gaps);
}

async function restartOverhead(ctx, runner) {
  const dir = ctx.tmpDir('runner-bench-');
  const stamps = path.join(dir, 'stamps');
  fs.mkdirSync(stamps);
  const attempts = 21;
  const agent = writeAgent(
    dir,
    'quick-agent',
    [
      'start=$(date +%s%N)',
      'cat >/dev/null',
      `n=$(ls "${stamps}" | wc -l)`,
      `[ "$n" -ge ${attempts - 1} ] && : > "$JRUN_TASK_FOLDER/DONE"`,
      `echo "$start $(date +%s%N)" > "${stamps}/$JRUN_ID"`,
    ].join('\n'),
  );
  const root = path.join(dir, 'runs');
  const task = taskId('restart');
  const result = await runner.runTask({ ...engineParts(ctx.lib), root, projectId: PROJECT, taskId: task, prompt: 'bench', config: commandConfig(agent), restartDelayMs: 0 });
  if (result.status !== 'done') throw new Error(`restart bench task ended ${result.status}`);
  const spans = result.runIds.map((id) => fs.readFileSync(path.join(stamps, id), 'utf8').trim().split(' ').map(BigInt));
  const gaps = [];
  for (let i = 1; i < spans.length; i++) gaps.push(Number(spans[i][0] - spans[i - 1][1]) / 1e6);
  return { median: median(gaps), attempts: spans.length };
}

function cpuTicks(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime
}

async function idleCpu(ctx) {
  const dir = ctx.tmpDir('runner-bench-');
  const root = path.join(dir, 'runs');
  const task = taskId('idle');
  const bus = path.join(root, PROJECT, task, 'TASK-MESSAGE-BUS.md');
  // the task checks that its agent's CLI exists before it waits: the fake claude of the tests
  const env = { ...process.env, HOME: dir, PATH: `${path.join(ctx.root, 'test', 'fixtures', 'agents')}${path.delimiter}${process.env.PATH}` };
  const child = spawn(process.execPath, [ctx.bin('run-agent'), 'task', '--root', root, '--project', PROJECT, '--task', task,
    '--prompt', 'wait', '--agent', 'claude', '--depends-on', taskId('never')], { env, stdio: 'ignore' });
  try {
    for (let i = 0; i < 200 && !(fs.existsSync(bus) && fs.readFileSync(bus, 'utf8').includes('task blocked by dependencies')); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 500));
    const before = cpuTicks(child.pid);
    const t0 = process.hrtime.bigint();
    await new Promise((r) => setTimeout(r, 4000));
    const ticks = cpuTicks(child.pid) - before;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    return (ticks / 100 / seconds) * 100;
  } finally {
    child.kill('SIGTERM');
  }
}

module.exports.run = async function run(ctx) {
  const runner = ctx.lib('runner');
  const { tasks: conc, floor: bareConc } = concurrency(ctx);
  const restart = await restartOverhead(ctx, runner);
  const cpu = await idleCpu(ctx);
  const bareSpawn = await bareSpawnLatency(ctx);
  // #15: meet the fixed target, or stay within the stated multiple of the physical floor measured
  // here in the same run (a loaded machine slows spawns for everyone)
  const concTarget = Math.max(600, Math.round(2 * bareConc));
  const restartTarget = Math.max(20, Math.round(2 * bareSpawn));
  return [
    { name: 'floor: 50 bare concurrent spawns of the agent with one fsync\'d record each (no runner), median of 3', value: bareConc, unit: 'ms', better: 'lower' },
    { name: '50 concurrent tasks (10 ms agent), one process of their own, median of 3', value: conc, unit: 'ms', target: concTarget, better: 'lower', note: `target max(600, 2 × floor); upstream 433 ms` },
    { name: 'floor: spawn → first instruction of a sh agent (median)', value: bareSpawn, unit: 'ms', better: 'lower' },
    { name: 'restart overhead: agent exit → next attempt start (median)', value: restart.median, unit: 'ms', target: restartTarget, better: 'lower', note: `${restart.attempts} attempts, restart delay 0; target max(20, 2 × floor)` },
    { name: 'idle run-agent task CPU while waiting on a dependency', value: cpu, unit: '%', target: 1, better: 'lower' },
  ];
};
