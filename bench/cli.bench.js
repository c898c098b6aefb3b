'use strict';
// CLI start-up (#15, #13 item 6): every figure is a ratio against `node -e 0` measured in the same
// run, interleaved (baseline, command, baseline, command, …) and reduced to medians, so a busy
// machine slows both sides alike. `task`/`job` start-up is measured to the agent's first
// instruction (the agent stamps the time); end to end runs a 10 ms agent to DONE. On a shared
// machine wall time swings with the load: each note also gives the CPU-time ratio (user + sys,
// averaged over the rounds, as the shell's `times` reports them), which the load barely moves.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { median } = require('./timing');
const { supervisors } = require('./proc-stats');
const { fsExtFor } = require('./fs-ext-for-node');

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

const tickSeconds = (t) => {
  const m = /^(\d+)m([\d.]+)s$/.exec(t);
  return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
};

/** CPU ms (user + sys) of one run of `cmd args`: the shell's `times` for its finished child. */
function cpu(cmd, args, env) {
  const r = spawnSync('/bin/sh', ['-c', '"$0" "$@" >/dev/null 2>&1; times', cmd, ...args], { env, encoding: 'utf8' });
  const children = (r.stdout.trim().split('\n')[1] || '').split(/\s+/).map(tickSeconds);
  if (children.length !== 2 || children.some(Number.isNaN)) throw new Error(`cannot read the CPU time of ${args.join(' ')}: ${r.stdout}`);
  return (children[0] + children[1]) * 1000;
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/** Spawn → the agent's first instruction, in ms (the CLI keeps running until the task ends). */
function untilAgentStarts(bin, args, s, node = process.execPath, nodeArgs = []) {
  fs.rmSync(s.stamp, { force: true });
  const t0 = wallNs();
  const r = spawnSync(node, [...nodeArgs, bin, ...args], { env: s.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
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

// The other supported Node line (22 or 24; issue #32: the CLI figures on both), informative: a
// binary named by BENCH_NODE_<major>, else where .ci/run installs it, else /opt/node<major>.
const LINES = ['22', '24'];
function nodeOfLine(major) {
  const pkg = `node-${process.platform}-${process.arch}`;
  const candidates = [process.env[`BENCH_NODE_${major}`], path.join(process.env.TMPDIR || '/tmp', `conductor-ci-node-${major}`, 'node_modules', pkg, 'bin', 'node'), path.join('/opt', `node${major}`, 'node_modules', pkg, 'bin', 'node')];
  return candidates.find((c) => c && fs.existsSync(c) && spawnSync(c, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout?.trim() === major);
}

/** Why `args` cannot run under `node` here (one line), or undefined: e.g. fs-ext built for another Node's ABI. */
function cannotRun(node, cli, args, env) {
  const r = spawnSync(node, [...cli, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return r.status === 0 ? undefined : (r.stderr.split('\n').find((l) => l.trim()) ?? `exit ${r.status}`).slice(0, 140);
}

/**
 * The same CLI figures (wall ÷ that Node's own `node -e 0`, interleaved) on the other supported Node
 * line, with fs-ext built for it (bench/fs-ext-for-node.js): node_modules has it for this Node only.
 */
function otherNodeLines(ctx, bin, s, commands, rounds) {
  const own = process.versions.node.split('.')[0];
  const figures = [];
  for (const major of LINES.filter((l) => l !== own)) {
    const node = nodeOfLine(major);
    if (!node) {
      figures.push({ name: `Node ${major}: not found (set BENCH_NODE_${major})`, value: 0, unit: '', better: 'lower' });
      continue;
    }
    const version = spawnSync(node, ['-v'], { encoding: 'utf8' }).stdout.trim();
    // the preload goes on the baseline's command line too, so the ratio does not count it
    let nodeArgs = [];
    let built = 'fs-ext built for it in a temp copy, loaded by a --require preload (on node -e 0 too)';
    try {
      nodeArgs = fsExtFor(ctx, node);
    } catch (err) {
      built = err.message;
    }
    const runnable = {};
    const taskArgs = () => ['task', '--project', PROJECT, '--task', taskId('n' + major), '--config', s.config, '--prompt', 'x', '--restart-delay', '0s'];
    for (const [name, args] of Object.entries({ ...commands, task: taskArgs() })) {
      const why = cannotRun(node, [...nodeArgs, bin], args, s.env);
      const note = `not measured: ${why}${nodeArgs.length ? '' : ` (${built})`}`;
      if (why) figures.push({ name: `Node ${major}: run-agent ${name}`, value: 0, unit: '', better: 'lower', note });
      else runnable[name] = args;
    }
    const base = [];
    const times = Object.fromEntries(Object.keys(runnable).map((k) => [k, []]));
    for (let i = 0; i < rounds; i++) {
      for (const [name, args] of Object.entries(runnable)) {
        base.push(run(node, [...nodeArgs, '-e', '0'], s.env));
        if (name === 'task') times[name].push(untilAgentStarts(bin, taskArgs(), s, node, nodeArgs));
        else times[name].push(run(node, [...nodeArgs, bin, ...args], s.env));
      }
    }
    const b = median(base);
    figures.push({ name: `Node ${major}: baseline node -e 0 (median, same run)`, value: b, unit: 'ms', better: 'lower', note: `${version}; ${built}` });
    for (const [name, t] of Object.entries(times)) {
      const what = name === 'task' ? 'task: start-up to agent spawn' : name;
      const fsExt = nodeArgs.length ? '; fs-ext built for it (temp copy, preload)' : '';
      figures.push({ name: `Node ${major}: run-agent ${what} ÷ node -e 0`, value: median(t) / b, unit: '×', better: 'lower', note: `${median(t).toFixed(0)} ms; informative${fsExt}` });
    }
  }
  return figures;
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
  // 15: the task figures of one binary read 2.31 and 2.48× in two back-to-back runs of 15 pairs here;
  // a median of 9 moved more than the targets' margins (docs/decisions.md)
  const rounds = Number(process.env.BENCH_CLI_ROUNDS || 15);
  const base = [];
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const cpuBase = [];
  const cpuTimes = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const startTask = [];
  const startJob = [];
  const endToEnd = [];
  // what the bundle and the code cache each bring (docs/decisions.md, "CLI start-up: one bundle")
  const steps = { 'unbundled build (CONDUCTOR_CLI_UNBUNDLED=1)': { CONDUCTOR_CLI_UNBUNDLED: '1' }, 'bundle without the V8 code cache': { NODE_DISABLE_COMPILE_CACHE: '1' } };
  const stepTimes = Object.fromEntries(Object.keys(steps).map((k) => [k, []]));
  const statusArgs = commands.status;
  // the same `task` through a warm task supervisor (RUN_AGENT_SUPERVISOR=1, docs/operations.md)
  const runtimeDir = path.join(s.dir, 'xdg');
  fs.mkdirSync(runtimeDir, { mode: 0o700 });
  // one shard: every round meets the supervisor warmed here (the default spreads clients over one per core)
  const sup = { ...s, env: { ...s.env, RUN_AGENT_SUPERVISOR: '1', RUN_AGENT_SUPERVISOR_SHARDS: '1', XDG_RUNTIME_DIR: runtimeDir, RUN_AGENT_SUPERVISOR_IDLE_MS: '600000' } };
  const supTaskArgs = () => ['task', '--project', PROJECT, '--task', taskId('sup'), '--config', s.config, '--prompt', 'x', '--restart-delay', '0s'];
  untilAgentStarts(bin, supTaskArgs(), sup); // starts it
  const startSup = [];
  const startJobSup = [];
  const endToEndSup = [];
  for (let i = 0; i < rounds; i++) {
    for (const [name, extra] of Object.entries(steps)) {
      base.push(run(node, ['-e', '0'], s.env));
      stepTimes[name].push(run(node, [bin, ...statusArgs], { ...s.env, ...extra }));
    }
    for (const [name, args] of Object.entries(commands)) {
      base.push(run(node, ['-e', '0'], s.env));
      times[name].push(run(node, [bin, ...args], s.env));
      cpuBase.push(cpu(node, ['-e', '0'], s.env));
      cpuTimes[name].push(cpu(node, [bin, ...args], s.env));
    }
    base.push(run(node, ['-e', '0'], s.env));
    const t0 = nowNs();
    startTask.push(untilAgentStarts(bin, ['task', '--project', PROJECT, '--task', taskId('start'), '--config', s.config, '--prompt', 'x', '--restart-delay', '0s'], s));
    endToEnd.push(Number(nowNs() - t0) / 1e6);
    base.push(run(node, ['-e', '0'], s.env));
    startJob.push(untilAgentStarts(bin, ['job', '--project', PROJECT, '--task', taskId('job'), '--config', s.config, '--prompt', 'x'], s));
    base.push(run(node, ['-e', '0'], s.env));
    const t1 = nowNs();
    startSup.push(untilAgentStarts(bin, supTaskArgs(), sup));
    endToEndSup.push(Number(nowNs() - t1) / 1e6);
    base.push(run(node, ['-e', '0'], s.env));
    startJobSup.push(untilAgentStarts(bin, ['job', '--project', PROJECT, '--task', taskId('supjob'), '--config', s.config, '--prompt', 'x'], sup));
  }
  const b = median(base);
  const ratio = (ms) => ms / b;
  const cpuRatio = (name) => (mean(cpuTimes[name]) / mean(cpuBase)).toFixed(2);
  const figures = [{ name: 'baseline: node -e 0 (median, same run)', value: b, unit: 'ms', better: 'lower', note: `CPU ${mean(cpuBase).toFixed(0)} ms` }];
  for (const [name, t] of Object.entries(stepTimes)) {
    figures.push({ name: `run-agent status, ${name} ÷ node -e 0`, value: ratio(median(t)), unit: '×', better: 'lower', note: `${median(t).toFixed(0)} ms; for comparison with run-agent status below` });
  }
  for (const [name, t] of Object.entries(times)) {
    figures.push({ name: `run-agent ${name} ÷ node -e 0`, value: ratio(median(t)), unit: '×', target: 2, better: 'lower', note: `${median(t).toFixed(0)} ms; CPU ${cpuRatio(name)}× node -e 0's` });
  }
  figures.push({ name: 'run-agent task: start-up to agent spawn ÷ node -e 0', value: ratio(median(startTask)), unit: '×', target: 2, better: 'lower', note: `${median(startTask).toFixed(0)} ms` });
  figures.push({ name: 'run-agent job: start-up to agent spawn ÷ node -e 0', value: ratio(median(startJob)), unit: '×', target: 2, better: 'lower', note: `${median(startJob).toFixed(0)} ms` });
  figures.push({ name: 'run-agent task, 10 ms agent, end to end ÷ node -e 0', value: ratio(median(endToEnd)), unit: '×', target: 2.5, better: 'lower', note: `${median(endToEnd).toFixed(0)} ms` });
  const viaSup = 'RUN_AGENT_SUPERVISOR=1 (warm supervisor)';
  figures.push({ name: `run-agent task, ${viaSup}: start-up to agent spawn ÷ node -e 0`, value: ratio(median(startSup)), unit: '×', target: 2, better: 'lower', note: `${median(startSup).toFixed(0)} ms; in-process loop above` });
  figures.push({ name: `run-agent job, ${viaSup}: start-up to agent spawn ÷ node -e 0`, value: ratio(median(startJobSup)), unit: '×', target: 2, better: 'lower', note: `${median(startJobSup).toFixed(0)} ms; in-process job above` });
  figures.push({ name: `run-agent task, ${viaSup}, 10 ms agent, end to end ÷ node -e 0`, value: ratio(median(endToEndSup)), unit: '×', target: 2.5, better: 'lower', note: `${median(endToEndSup).toFixed(0)} ms; in-process loop above` });
  figures.push(...otherNodeLines(ctx, bin, s, commands, rounds));
  const conc = await concurrentTasks(bin, s, 50);
  figures.push({ name: '50 concurrent run-agent task processes (10 ms agent)', value: conc, unit: 'ms', target: 7000, better: 'lower',
    note: `${(conc / b).toFixed(0)}× node -e 0; target = 2× upstream's 3.4 s (#15)` });
  const concSup = await concurrentTasks(bin, sup, 50);
  figures.push({ name: `50 concurrent run-agent task clients, ${viaSup} (10 ms agent)`, value: concSup, unit: 'ms', target: 7000, better: 'lower', note: `${(concSup / b).toFixed(0)}× node -e 0` });
  for (const pid of supervisors(runtimeDir)) process.kill(pid, 'SIGTERM');
  return figures;
};
