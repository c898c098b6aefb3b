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
  let exited = false;
  child.on('exit', () => (exited = true));
  const deadline = Date.now() + 60000;
  try {
    for (;;) {
      if (exited || Date.now() > deadline) throw new Error(`${cmd} serve ${exited ? 'exited' : 'did not answer /api/v1/health within 60 s'} (ours needs \`npm run build\`)`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
        if (res.ok) {
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          await new Promise((r) => setTimeout(r, 2000));
          const rss = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          return { ms, rssMb: rss ? Number(rss[1]) / 1024 : NaN };
        }
      } catch { /* not up yet */ }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    if (!exited) process.kill(-child.pid, 'SIGTERM');
  }
}

/** Wall ms of `n` concurrent runs of `args()`; every one must succeed. */
async function concurrently([cmd, ...pre], args, runsRoot, n) {
  const t0 = process.hrtime.bigint();
  const codes = await Promise.all(Array.from({ length: n }, () => new Promise((resolve) => {
    spawn(cmd, [...pre, ...args()], { env: { ...env, CONDUCTOR_ROOT: runsRoot, RUN_AGENT_ROOT: runsRoot }, stdio: 'ignore' }).on('exit', resolve);
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
    'run-agent task (fake claude, DONE at once)': () => ['task', '--project', 'demo', '--task', `task-20260101-000000-cmp${++seq}`, '--agent', 'claude', '--prompt', 'x'],
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
  const task = () => ['task', '--project', 'demo', '--task', `task-20260101-000000-cmc${++seq}`, '--agent', 'claude', '--prompt', 'x'];
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
    a.push(await untilHealthy(ours, roots.ours, 24000 + i));
    b.push(await untilHealthy(theirs, roots.theirs, 24100 + i));
  }
  const ms = (v) => median(v.map((x) => x.ms));
  const rss = (v) => median(v.map((x) => x.rssMb));
  console.log(`server start until health answers: upstream ${ms(b).toFixed(0)} ms, ours ${ms(a).toFixed(0)} ms, ratio ${(ms(a) / ms(b)).toFixed(2)}`);
  console.log(`server RSS idle (2 s after health): upstream ${rss(b).toFixed(0)} MB, ours ${rss(a).toFixed(0)} MB, ratio ${(rss(a) / rss(b)).toFixed(2)}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
