'use strict';
/* global fetch */
// `npm run bench:compare` (#15): ours against an upstream binary, side by side on this machine.
// UPSTREAM_BIN=/path/to/upstream/run-agent; each measure alternates ours/upstream and reports
// medians and the ratio ours ÷ upstream. Without UPSTREAM_BIN it says so and skips (exit 0).
// Both get the same command lines: the runs root as --root (upstream reads CONDUCTOR_ROOT only in
// `serve`), the project of `task` from $JRUN_PROJECT_ID (upstream's `task` has no --project).
const { spawn, spawnSync } = require('node:child_process');
const { followSse, median, medianLatency, procStatusMb, sleep, throughput } = require('./timing');
const { seedFinishedRuns } = require('./run-fixtures');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const upstream = process.env.UPSTREAM_BIN;
if (!upstream || !fs.existsSync(upstream)) {
  console.log(`bench:compare skipped: ${upstream ? `UPSTREAM_BIN=${upstream} does not exist` : 'UPSTREAM_BIN is not set'} (no upstream binary to compare with)`);
  process.exit(0);
}
const ours = [process.execPath, path.join(root, 'bin', 'run-agent')];
const theirs = [upstream];
const rounds = Number(process.env.BENCH_COMPARE_ROUNDS || 7);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-compare-'));
const fakeAgents = path.join(root, 'test', 'fixtures', 'agents');
const env = { ...process.env, HOME: dir, PATH: `${fakeAgents}${path.delimiter}${process.env.PATH}`, FAKE_AGENT_DONE: '1' };
let seq = 0;

/** The command line and environment of one CLI call of either side (see the header). */
function invocation(args, runsRoot) {
  return { args: args[0] === '--version' ? args : [...args, '--root', runsRoot], env: { ...env, JRUN_PROJECT_ID: 'demo' } };
}

function time([cmd, ...pre], cliArgs, runsRoot) {
  const { args, env: callEnv } = invocation(cliArgs, runsRoot);
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, [...pre, ...args], { env: callEnv, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * Starts `serve` on `runsRoot`, waits for /api/v1/health, runs `measure(url, pid, readyMs)` (readyMs:
 * spawn → first healthy answer), then stops the server.
 */
async function withServer([cmd, ...pre], runsRoot, port, measure) {
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, [...pre, 'serve', '--port', String(port), '--root', runsRoot], { env, stdio: 'ignore', detached: true });
  try {
    const deadline = Date.now() + 60000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${cmd} serve exited ${child.exitCode} (ours needs \`npm run build\`)`);
      if (Date.now() > deadline) throw new Error(`${cmd} serve did not answer /api/v1/health within 60 s`);
      const ok = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then((r) => r.ok, () => false);
      if (ok) break;
      await sleep(5);
    }
    return await measure(`http://127.0.0.1:${port}`, child.pid, Number(process.hrtime.bigint() - t0) / 1e6);
  } finally {
    if (child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  }
}

/** What the issue's table measures on a server: the task list, runs/flat, RSS with 200 SSE clients. */
async function apiFigures(url, pid) {
  const tasks = `${url}/api/projects/bench/tasks?limit=50`;
  const flat = `${url}/api/projects/bench/runs/flat`;
  await throughput(tasks, 10, 300);
  await medianLatency(flat, 5);
  const rps = await throughput(tasks, 10, 3000);
  const flatMs = await medianLatency(flat, 30);
  const streams = [];
  try {
    for (let i = 0; i < 200; i++) streams.push(await followSse(`${url}/api/projects/bench/messages/stream`, () => undefined));
    await sleep(1000);
    return { rps, flatMs, sseRssMb: procStatusMb(pid, 'VmRSS') };
  } finally {
    for (const s of streams) s.close();
  }
}

/** Start-up time, then RSS after 2 s idle. */
const startAndIdle = async (url, pid, ms) => {
  await sleep(2000);
  return { ms, rssMb: procStatusMb(pid, 'VmRSS') };
};

/** Wall ms of `n` concurrent runs of `args()`; every one must succeed. */
async function concurrently([cmd, ...pre], cliArgs, runsRoot, n) {
  const t0 = process.hrtime.bigint();
  const codes = await Promise.all(Array.from({ length: n }, () => new Promise((resolve) => {
    const { args, env: callEnv } = invocation(cliArgs(), runsRoot);
    spawn(cmd, [...pre, ...args], { env: callEnv, stdio: 'ignore' }).on('exit', resolve);
  })));
  const failed = codes.filter((c) => c !== 0).length;
  if (failed) throw new Error(`${cmd}: ${failed} of ${n} concurrent runs failed`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * A project bus of `count` messages, copied from one that `ours` posted, records separated by a
 * blank line as both writers append them (the same file for both).
 */
function seedBigBus(runsRoot, project, count) {
  const seedRoot = fs.mkdtempSync(path.join(dir, 'seed-'));
  fs.mkdirSync(path.join(seedRoot, project), { recursive: true });
  time(ours, ['bus', 'post', '--project', project, '--body', 'a message of a large bus'], seedRoot);
  const one = fs.readFileSync(path.join(seedRoot, project, 'PROJECT-MESSAGE-BUS.md'), 'utf8');
  const id = /^msg_id: (\S+)$/m.exec(one)[1];
  const parts = [];
  for (let i = 0; i < count; i++) parts.push(one.replace(id, `${id}-${i}`));
  fs.mkdirSync(path.join(runsRoot, project), { recursive: true });
  fs.writeFileSync(path.join(runsRoot, project, 'PROJECT-MESSAGE-BUS.md'), parts.join('\n'));
}

async function main() {
  const roots = { ours: path.join(dir, 'ours'), theirs: path.join(dir, 'theirs') };
  for (const r of Object.values(roots)) fs.mkdirSync(path.join(r, 'demo'), { recursive: true });
  const measures = {
    '--version': () => ['--version'],
    'bus post': () => ['bus', 'post', '--project', 'demo', '--body', 'hello'],
    'bus read --tail 10': () => ['bus', 'read', '--project', 'demo', '--tail', '10'],
    'run-agent task (fake claude, DONE at once)': () => ['task', '--task', `task-20260101-000000-cmp${++seq}`, '--agent', 'claude', '--prompt', 'x'],
    'bus read --tail 10 (100k messages)': () => ['bus', 'read', '--project', 'big', '--tail', '10'],
  };
  for (const r of Object.values(roots)) seedBigBus(r, 'big', 100000);
  console.log(`ours: ${ours.join(' ')}\nupstream: ${upstream}\n`);
  for (const [name, args] of Object.entries(measures)) {
    const a = [];
    const b = [];
    for (let i = 0; i < rounds; i++) {
      a.push(time(ours, args(), roots.ours));
      b.push(time(theirs, args(), roots.theirs));
    }
    console.log(`${name}: upstream ${median(b).toFixed(0)} ms, ours ${median(a).toFixed(0)} ms, ratio ${(median(a) / median(b)).toFixed(2)}`);
  }
  const task = () => ['task', '--task', `task-20260101-000000-cmc${++seq}`, '--agent', 'claude', '--prompt', 'x'];
  const ca = [];
  const cb = [];
  for (let i = 0; i < 3; i++) {
    ca.push(await concurrently(ours, task, roots.ours, 50));
    cb.push(await concurrently(theirs, task, roots.theirs, 50));
  }
  console.log(`50 concurrent run-agent task processes: upstream ${median(cb).toFixed(0)} ms, ours ${median(ca).toFixed(0)} ms, ratio ${(median(ca) / median(cb)).toFixed(2)}`);
  const a = [];
  const b = [];
  for (let i = 0; i < 3; i++) {
    a.push(await withServer(ours, roots.ours, 24000 + i, startAndIdle));
    b.push(await withServer(theirs, roots.theirs, 24100 + i, startAndIdle));
  }
  const ms = (v) => median(v.map((x) => x.ms));
  const rss = (v) => median(v.map((x) => x.rssMb));
  console.log(`server start until health answers: upstream ${ms(b).toFixed(0)} ms, ours ${ms(a).toFixed(0)} ms, ratio ${(ms(a) / ms(b)).toFixed(2)}`);
  console.log(`server RSS idle (2 s after health): upstream ${rss(b).toFixed(0)} MB, ours ${rss(a).toFixed(0)} MB, ratio ${(rss(a) / rss(b)).toFixed(2)}`);
  const storage = require(path.join(root, 'dist', 'apps', 'cli', 'libs', 'storage', 'src'));
  for (const r of Object.values(roots)) {
    seedFinishedRuns(storage, r, 'bench');
    time(ours, ['bus', 'post', '--project', 'bench', '--body', 'the project bus the SSE clients follow'], r);
  }
  const apiOurs = await withServer(ours, roots.ours, 24200, apiFigures);
  const apiTheirs = await withServer(theirs, roots.theirs, 24201, apiFigures);
  const row = (name, unit, key, digits) => console.log(`${name}: upstream ${apiTheirs[key].toFixed(digits)} ${unit}, ours ${apiOurs[key].toFixed(digits)} ${unit}, ratio ${(apiOurs[key] / apiTheirs[key]).toFixed(2)}`);
  row('project task list limit=50 (200 tasks), 10 in flight', 'rps', 'rps', 0);
  row('runs/flat (1,000 runs), median', 'ms', 'flatMs', 1);
  row('server RSS with 200 SSE clients', 'MB', 'sseRssMb', 0);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
