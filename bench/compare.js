'use strict';
/* global fetch */
// `npm run bench:compare` (#15): ours against an upstream binary, side by side on this machine.
// UPSTREAM_BIN=/path/to/upstream/run-agent; each measure alternates ours/upstream and reports
// medians and the ratio ours ÷ upstream. Without UPSTREAM_BIN it says so and skips (exit 0).
const { spawn, spawnSync } = require('node:child_process');
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
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-compare-'));
const fakeAgents = path.join(root, 'test', 'fixtures', 'agents');
const env = { ...process.env, HOME: dir, PATH: `${fakeAgents}${path.delimiter}${process.env.PATH}`, FAKE_AGENT_DONE: '1' };
let seq = 0;

function time([cmd, ...pre], args, runsRoot) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, [...pre, ...args], { env: { ...env, CONDUCTOR_ROOT: runsRoot, RUN_AGENT_ROOT: runsRoot }, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function untilHealthy([cmd, ...pre], runsRoot, port) {
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, [...pre, 'serve', '--port', String(port), '--root', runsRoot], { env, stdio: 'ignore', detached: true });
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
        if (res.ok) return Number(process.hrtime.bigint() - t0) / 1e6;
      } catch { /* not up yet */ }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    process.kill(-child.pid, 'SIGTERM');
  }
}

async function main() {
  const roots = { ours: path.join(dir, 'ours'), theirs: path.join(dir, 'theirs') };
  for (const r of Object.values(roots)) fs.mkdirSync(path.join(r, 'demo'), { recursive: true });
  const measures = {
    '--version': () => ['--version'],
    'bus post': () => ['bus', 'post', '--project', 'demo', '--body', 'hello'],
    'bus read --tail 10': () => ['bus', 'read', '--project', 'demo', '--tail', '10'],
    'run-agent task (fake claude, DONE at once)': () => ['task', '--project', 'demo', '--task', `task-20260101-000000-cmp${++seq}`, '--agent', 'claude', '--prompt', 'x'],
  };
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
  const a = [];
  const b = [];
  for (let i = 0; i < 3; i++) {
    a.push(await untilHealthy(ours, roots.ours, 24000 + i));
    b.push(await untilHealthy(theirs, roots.theirs, 24100 + i));
  }
  console.log(`server start until health answers: upstream ${median(b).toFixed(0)} ms, ours ${median(a).toFixed(0)} ms, ratio ${(median(a) / median(b)).toFixed(2)}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
