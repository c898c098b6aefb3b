'use strict';
// CLI start-up (#15, #13 item 6): every figure is a ratio against `node -e 0` measured in the same
// run, interleaved (baseline, command, baseline, command, …) and reduced to medians, so a busy
// machine slows both sides alike. `task`/`job` start-up is measured to the agent's first
// instruction (the agent stamps the time); end to end runs a 10 ms agent to DONE.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { median } = require('./timing');

const PROJECT = 'bench';
let seq = 0;
const taskId = (slug) => `task-20260101-000000-${slug}-${process.pid}-${++seq}`;

const nowNs = () => process.hrtime.bigint();
// the agent's `date +%s%N` and our hrtime are different clocks: compare wall-clock nanoseconds
const wallNs = () => BigInt(Date.now()) * 1000000n;

function setup(ctx) {
  const dir = ctx.tmpDir('cli-bench-');
  const root = path.join(dir, 'runs');
  fs.mkdirSync(path.join(root, PROJECT), { recursive: true });
  const stamp = path.join(dir, 'stamp');
  const agent = path.join(dir, 'agent');
  // first instruction: the spawn time stamp; then a 10 ms agent that finishes its task
  fs.writeFileSync(agent, `#!/bin/sh\ndate +%s%N > "${stamp}"\ncat >/dev/null\nsleep 0.01\n: > "$JRUN_TASK_FOLDER/DONE"\necho done\n`, { mode: 0o755 });
  const config = path.join(dir, 'config.yaml');
  fs.writeFileSync(config, `agents:\n  fast:\n    type: command\n    command: ${agent}\ndefaults:\n  agent: fast\n`);
  const env = { ...process.env, HOME: dir, CONDUCTOR_ROOT: root };
  for (const k of Object.keys(env)) if (k.startsWith('JRUN_')) delete env[k];
  return { dir, root, stamp, config, env };
}

function run(cmd, args, env) {
  const t0 = nowNs();
  const r = spawnSync(cmd, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return Number(nowNs() - t0) / 1e6;
}

/** Spawn → the agent's first instruction, in ms (the CLI keeps running until the task ends). */
function untilAgentStarts(bin, args, s) {
  fs.rmSync(s.stamp, { force: true });
  const t0 = wallNs();
  const r = spawnSync(process.execPath, [bin, ...args], { env: s.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return Number(BigInt(fs.readFileSync(s.stamp, 'utf8').trim()) - t0) / 1e6;
}

async function concurrentTasks(bin, s, n) {
  const t0 = nowNs();
  const codes = await Promise.all(Array.from({ length: n }, () => new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, 'task', '--root', s.root, '--project', PROJECT, '--task', taskId('conc'), '--config', s.config,
      '--prompt', 'bench', '--restart-delay', '0s'], { env: s.env, stdio: 'ignore' });
    child.on('exit', (code) => resolve(code));
  })));
  const ms = Number(nowNs() - t0) / 1e6;
  const failed = codes.filter((c) => c !== 0).length;
  if (failed) throw new Error(`${failed} of ${n} concurrent run-agent task processes failed`);
  return ms;
}

module.exports.run = async function runBench(ctx) {
  const bin = ctx.bin('run-agent');
  const s = setup(ctx);
  const node = process.execPath;
  run(node, [bin, 'bus', 'post', '--project', PROJECT, '--body', 'seed'], s.env);
  const task = taskId('status');
  run(node, [bin, 'task', '--project', PROJECT, '--task', task, '--config', s.config, '--prompt', 'x', '--restart-delay', '0s'], s.env);
  const commands = {
    '--version': ['--version'],
    'bus post': ['bus', 'post', '--project', PROJECT, '--body', 'hello'],
    'bus read --tail 10': ['bus', 'read', '--project', PROJECT, '--tail', '10'],
    status: ['status', '--project', PROJECT],
    list: ['list'],
  };
  const rounds = Number(process.env.BENCH_CLI_ROUNDS || 9);
  const base = [];
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const startTask = [];
  const startJob = [];
  const endToEnd = [];
  const floor = [];
  // the physical floor of any Nest-path command: loading NestJS + nest-commander, nothing else
  const lean = path.join(ctx.root, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'boot', 'lean-nest.js');
  const floorScript = `require(${JSON.stringify(lean)});require('reflect-metadata');require('@nestjs/core');require('nest-commander')`;
  for (let i = 0; i < rounds; i++) {
    base.push(run(node, ['-e', '0'], s.env));
    floor.push(run(node, ['-e', floorScript], { ...s.env, NODE_PATH: path.join(ctx.root, 'node_modules') }));
    for (const [name, args] of Object.entries(commands)) {
      base.push(run(node, ['-e', '0'], s.env));
      times[name].push(run(node, [bin, ...args], s.env));
    }
    base.push(run(node, ['-e', '0'], s.env));
    const t0 = nowNs();
    startTask.push(untilAgentStarts(bin, ['task', '--project', PROJECT, '--task', taskId('start'), '--config', s.config, '--prompt', 'x', '--restart-delay', '0s'], s));
    endToEnd.push(Number(nowNs() - t0) / 1e6);
    base.push(run(node, ['-e', '0'], s.env));
    startJob.push(untilAgentStarts(bin, ['job', '--project', PROJECT, '--task', taskId('job'), '--config', s.config, '--prompt', 'x'], s));
  }
  const b = median(base);
  const ratio = (ms) => ms / b;
  const figures = [
    { name: 'baseline: node -e 0 (median, same run)', value: b, unit: 'ms', better: 'lower' },
    { name: 'floor: load NestJS + nest-commander only ÷ node -e 0', value: ratio(median(floor)), unit: '×', better: 'lower', note: 'what any Nest-path command pays before its own code' },
  ];
  for (const [name, t] of Object.entries(times)) {
    figures.push({ name: `run-agent ${name} ÷ node -e 0`, value: ratio(median(t)), unit: '×', target: 2, better: 'lower', note: `${median(t).toFixed(0)} ms` });
  }
  figures.push({ name: 'run-agent task: start-up to agent spawn ÷ node -e 0', value: ratio(median(startTask)), unit: '×', target: 2, better: 'lower', note: `${median(startTask).toFixed(0)} ms` });
  figures.push({ name: 'run-agent job: start-up to agent spawn ÷ node -e 0', value: ratio(median(startJob)), unit: '×', target: 2, better: 'lower', note: `${median(startJob).toFixed(0)} ms` });
  figures.push({ name: 'run-agent task, 10 ms agent, end to end ÷ node -e 0', value: ratio(median(endToEnd)), unit: '×', target: 2.5, better: 'lower', note: `${median(endToEnd).toFixed(0)} ms` });
  const conc = await concurrentTasks(bin, s, 50);
  figures.push({ name: '50 concurrent run-agent task processes (10 ms agent)', value: conc, unit: 'ms', target: 7000, better: 'lower',
    note: `${(conc / b).toFixed(0)}× node -e 0; target = 2× upstream's 3.4 s (#15)` });
  return figures;
};
