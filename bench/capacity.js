'use strict';
/* global fetch */
// Capacity (issue #33): N concurrent root tasks (`run-agent task`, one runner process each) whose
// fake agent holds 100 MB and lives S seconds. Measured in a process of its own (capacity.bench.js
// runs it), prints JSON:
// - start latency from submission (the runner process spawned) to the agent's spawn (the agent
//   writes its clock first), p50/p99; baseline: the same agent spawned bare by this process;
// - our own processes' memory during the plateau (every agent alive): Rss and Pss of the runner
//   processes (not their agents) from /proc/<pid>/smaps_rollup; baseline: one idle `node` process;
// - CPU of the runners during the plateau; queued by admission (bus "waiting for memory");
// - lost (a task not done, or its agent never started) and doubled (a task with more than one run
//   or agent start).
// - mode `runners`: one `run-agent task` runner process per task (the loop in each); mode
//   `supervisor`: the same clients with RUN_AGENT_SUPERVISOR=1, the loops in one task supervisor
//   (counted among our processes); mode `server`: POST /api/v1/tasks to a `conductor`, the loops
//   in the server (our only process; its start-up is not counted).
//   node bench/capacity.js <repo root> <temp folder> <n> <agent seconds> <agent MB> <runners|supervisor|server> [min_available_memory]
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { pct, rollup, supervisors } = require('./proc-stats');

const [repo, dir, nArg, secondsArg, mbArg, mode, floorArg] = process.argv.slice(2);
const N = Number(nArg);
const SECONDS = Number(secondsArg);
const MB = Number(mbArg);
const runAgent = path.join(repo, 'bin', 'run-agent');
const root = path.join(dir, 'runs');
const clock = () => Number(process.hrtime.bigint() / 1000n) / 1000; // ms, CLOCK_MONOTONIC (same as the agent's)

// The agent: its spawn instant first (monotonic ms via /proc/uptime is too coarse: node's hrtime),
// then a node process holding MB megabytes for SECONDS, then DONE.
const agent = path.join(dir, 'hold-agent');
fs.writeFileSync(agent, `#!/usr/bin/env node
const fs = require('node:fs');
const net = require('node:net');
const t = Number(process.hrtime.bigint() / 1000n) / 1000;
fs.appendFileSync(process.env.JRUN_TASK_FOLDER + '/agent-spawned', t + '\\n');
const hold = Buffer.alloc(${MB} * 1024 * 1024, 1);
process.stdin.resume();
setTimeout(() => { fs.writeFileSync(process.env.JRUN_TASK_FOLDER + '/DONE', ''); console.log('held ' + hold.length); process.exit(0); }, ${SECONDS * 1000});
`, { mode: 0o755 });
const config = path.join(dir, 'config.yaml');
fs.writeFileSync(config, [
  'agents:', '  hold:', '    type: command', `    command: ${agent}`,
  'defaults:', '  agent: hold', ...(floorArg ? [`  min_available_memory: ${floorArg}`] : []), '',
].join('\n'));

function cpuTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}
const taskDir = (i) => path.join(root, 'cap', `task-20260101-000000-cap-${i}`);
const spawnedTimes = (i) => {
  try {
    return fs.readFileSync(path.join(taskDir(i), 'agent-spawned'), 'utf8').trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Pages swapped out since boot (/proc/vmstat pswpout) and MB available now (/proc/meminfo MemAvailable). */
const swappedOut = () => Number(/^pswpout (\d+)$/m.exec(fs.readFileSync('/proc/vmstat', 'utf8'))?.[1] ?? 0);
const availableMb = () => Number(/^MemAvailable:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024;

/** The floor: the same N agents spawned at once by this process, each held until all have started (as in the real run). */
async function baselineSpawn() {
  const d = path.join(dir, 'bare');
  const lat = [];
  const children = [];
  await Promise.all(Array.from({ length: N }, async (_, i) => {
    const folder = path.join(d, String(i));
    fs.mkdirSync(folder, { recursive: true });
    const t0 = clock();
    const child = spawn(agent, [], { env: { ...process.env, JRUN_TASK_FOLDER: folder }, stdio: ['pipe', 'ignore', 'ignore'] });
    children.push(child);
    child.stdin.end('x');
    for (;;) {
      await sleep(20);
      if (fs.existsSync(path.join(folder, 'agent-spawned'))) break;
    }
    lat.push(Number(fs.readFileSync(path.join(folder, 'agent-spawned'), 'utf8')) - t0);
  }));
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
  return { p50: pct(lat, 50), p99: pct(lat, 99) };
}

function baselineNode() {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  return sleep(500).then(() => {
    const m = rollup(child.pid);
    child.kill('SIGKILL');
    return m;
  });
}

/** Mode `runners`/`supervisor`: one `run-agent task` client per task; its exit is the task's. */
function runTask(env, i) {
  const child = spawn(process.execPath, [runAgent, 'task', '--root', root, '--config', config, '--project', 'cap', '--task', `task-20260101-000000-cap-${i}`,
    '--prompt', 'hold', '--max-restarts', '0', '--child-poll-interval', '200ms'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b) => (err += b));
  return { child, exit: new Promise((r) => child.on('exit', (code) => r({ code, err }))) };
}

/** Mode `server`: `conductor` on a free loopback port, this bench's HOME holding its API key. */
async function startServer(env) {
  const port = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  const child = spawn(process.execPath, [path.join(repo, 'bin', 'conductor'), '--root', root, '--config', config, '--host', '127.0.0.1', '--port', String(port)], { env, stdio: 'ignore' });
  process.on('exit', () => child.kill('SIGKILL')); // a failed bench leaves no server behind
  const url = `http://127.0.0.1:${port}`;
  const keyFile = path.join(env.HOME, '.run-agent', 'api-key');
  for (const deadline = clock() + 30000; ; await sleep(50)) {
    if (clock() > deadline) throw new Error('conductor did not answer within 30 s');
    if (!fs.existsSync(keyFile)) continue;
    const key = fs.readFileSync(keyFile, 'utf8').trim();
    const ok = await fetch(`${url}/api/v1/status`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.ok, () => false);
    if (ok) return { child, url, key, readyTicks: cpuTicks(child.pid), stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) };
  }
}

/** Mode `server`: POST /api/v1/tasks; the task ends when DONE is written (or the run ends without it). */
function postTask(server, i) {
  const id = `task-20260101-000000-cap-${i}`;
  const posted = fetch(`${server.url}/api/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: 'cap', task_id: id, agent_type: 'hold', prompt: 'hold' }),
  }).then(async (r) => (r.status === 201 || r.status === 200 ? undefined : `POST ${r.status}: ${await r.text()}`), (err) => String(err));
  const exit = posted.then(async (err) => {
    if (err) return { code: 1, err };
    const runs = path.join(taskDir(i), 'runs');
    for (const deadline = clock() + SECONDS * 6000; clock() < deadline; await sleep(200)) {
      if (fs.existsSync(path.join(taskDir(i), 'DONE'))) return { code: 0, err: '' };
      const info = (r) => {
        try {
          return fs.readFileSync(path.join(runs, r, 'run-info.yaml'), 'utf8');
        } catch {
          return ''; // not written yet
        }
      };
      const ended = fs.existsSync(runs) && fs.readdirSync(runs).some((r) => /status: (completed|failed|stopped)/.test(info(r)));
      if (ended) return { code: 1, err: `${id} ended without DONE` };
    }
    return { code: 1, err: `${id} did not end` };
  });
  return { exit };
}

(async () => {
  const bare = await baselineSpawn();
  const node = await baselineNode();
  const runners = [];
  const submitted = [];
  const env = { ...process.env, HOME: dir };
  for (const k of Object.keys(env)) if (/^(JRUN_|CONDUCTOR_|RUN_AGENT_)/.test(k)) delete env[k];
  const runtimeDir = path.join(dir, 'xdg');
  if (mode === 'supervisor') {
    fs.mkdirSync(runtimeDir, { mode: 0o700 });
    Object.assign(env, { RUN_AGENT_SUPERVISOR: '1', XDG_RUNTIME_DIR: runtimeDir });
  }
  spawnSync('sync');
  const swap0 = swappedOut();
  let minAvailable = availableMb();
  const memWatch = setInterval(() => (minAvailable = Math.min(minAvailable, availableMb())), 100);
  const server = mode === 'server' ? await startServer(env) : undefined;
  for (let i = 0; i < N; i++) {
    submitted.push(clock());
    runners.push(server ? postTask(server, i) : runTask(env, i));
  }
  // plateau: every agent spawned (or the first agents are about to end)
  const deadline = clock() + SECONDS * 1000 * 0.8;
  while (clock() < deadline && Array.from({ length: N }, (_, i) => spawnedTimes(i).length).some((n) => n === 0)) await sleep(100);
  const allStarted = Array.from({ length: N }, (_, i) => spawnedTimes(i).length).every((n) => n > 0);
  const live = server ? [server.child.pid] : [...runners.map((r) => r.child.pid), ...supervisors(runtimeDir)];
  // the server's own start-up is not a task's: its CPU counts from when it answered
  const cpu0 = live.map((pid) => cpuTicks(pid) - (server ? server.readyTicks : 0));
  const t0 = clock();
  await sleep(Math.min(3000, SECONDS * 200));
  const mem = live.map(rollup).filter(Boolean);
  const cpuMs = ((live.map(cpuTicks).reduce((a, b, i) => a + b - cpu0[i], 0)) * 10);
  const windowMs = clock() - t0;
  const ends = await Promise.all(runners.map((r) => r.exit));
  clearInterval(memWatch);
  if (server) await server.stop();
  const latencies = [];
  let lost = 0;
  let doubled = 0;
  let queued = 0;
  for (let i = 0; i < N; i++) {
    const times = spawnedTimes(i);
    if (times.length === 0 || ends[i].code !== 0 || !fs.existsSync(path.join(taskDir(i), 'DONE'))) lost++;
    const runs = fs.existsSync(path.join(taskDir(i), 'runs')) ? fs.readdirSync(path.join(taskDir(i), 'runs')).length : 0;
    if (times.length > 1 || runs > 1) doubled++;
    if (times.length) latencies.push(times[0] - submitted[i]);
    const bus = path.join(taskDir(i), 'TASK-MESSAGE-BUS.md');
    if (fs.existsSync(bus) && fs.readFileSync(bus, 'utf8').includes('waiting for memory')) queued++;
  }
  const sum = (k) => mem.reduce((a, m) => a + m[k], 0);
  process.stdout.write(JSON.stringify({
    n: N, allStarted, sampled: mem.length,
    p50: pct(latencies, 50), p99: pct(latencies, 99), bare,
    rssTotal: sum('rss'), pssTotal: sum('pss'), rssPer: sum('rss') / N, pssPer: sum('pss') / N,
    node, cpuStartMs: (cpu0.reduce((a, b) => a + b, 0) * 10) / N, cpuPctPerRunner: (cpuMs / windowMs / N) * 100,
    queued, lost, doubled, swapOutPages: swappedOut() - swap0, minAvailableMb: minAvailable, errors: ends.filter((e) => e.code !== 0).slice(0, 3).map((e) => e.err.trim().split('\n').pop()),
  }));
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
