'use strict';
// Capacity, one tree (issue #33): a root `run-agent task` whose fake agents fan out with
// `run-agent job` to depth 4 and 200 children in all (4 → 16 → 48 → 132), every agent holding MB
// megabytes until its children ended and SECONDS passed. Measured in a process of its own
// (capacity-tree.bench.js runs it), prints JSON:
// - child start latency, from the parent agent invoking `run-agent job` to the child agent's
//   spawn, p50/p99; the tree's fill time (root submission → every agent spawned);
// - our own processes' memory at the plateau (every agent alive): Pss/Rss of the runner
//   processes (`run-agent`), not their agents;
// - lost (an agent that never started, or the root not DONE) and doubled (an agent started twice).
// Mode `runners`: one `run-agent` runner process per agent; mode `supervisor`: RUN_AGENT_SUPERVISOR=1,
// every `run-agent task|job` a thin client of the host's task supervisor (counted among our processes);
// mode `bare`: the floor, the same agents starting each other directly (node <agent>, no run-agent).
// A child learns its place in the tree from its prompt, as a real sub-agent learns its work, so
// every agent calls `run-agent job` in the same environment.
//   node bench/capacity-tree.js <repo root> <temp folder> <agent seconds> <agent MB> <runners|supervisor|bare>
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pct, rollup, supervisors } = require('./proc-stats');

const [repo, dir, secondsArg, mbArg, mode = 'runners'] = process.argv.slice(2);
const SECONDS = Number(secondsArg);
const MB = Number(mbArg);
const CHILDREN = 200;
const runAgent = path.join(repo, 'bin', 'run-agent');
const root = path.join(dir, 'runs');
const spawned = path.join(dir, 'spawned'); // one line per agent start: "<node id> <latency ms>"
const clock = () => Number(process.hrtime.bigint() / 1000n) / 1000;

// node id "0" is the root; a child's id is "<parent id>.<i>". Children per node by depth: 4, 4, 3,
// then 3 for the first 36 nodes of depth 3 and 2 for the other 12 (4 + 16 + 48 + 132 = 200).
const agent = path.join(dir, 'tree-agent');
fs.writeFileSync(agent, `#!/usr/bin/env node
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const clock = () => Number(process.hrtime.bigint() / 1000n) / 1000;
const now = clock();
// a child's prompt (stdin) holds "TREE-NODE <id> <ordinal> <submitted ms>"; the root's is "fan out"
const run = (prompt) => {
  const place = /TREE-NODE (\\S+) (\\d+) ([\\d.]+)/.exec(prompt);
  const id = place ? place[1] : '0';
  const ordinalHere = place ? Number(place[2]) : 0;
  const depth = id.split('.').length - 1;
  fs.appendFileSync(${JSON.stringify(spawned)}, id + ' ' + (place ? (now - Number(place[3])).toFixed(1) : '0') + '\\n');
  const hold = Buffer.alloc(${MB} * 1024 * 1024, 1);
  const n = depth === 0 || depth === 1 ? 4 : depth === 2 ? 3 : depth === 3 ? (ordinalHere < 36 ? 3 : 2) : 0;
  const children = Array.from({ length: n }, (_, i) => new Promise((resolve) => {
    const ordinal = ordinalHere * (depth === 0 || depth === 1 ? 4 : 3) + i;
    const childPrompt = 'TREE-NODE ' + id + '.' + i + ' ' + ordinal + ' ' + clock();
    const bare = process.env.TREE_BARE === '1';
    const child = bare
      ? spawn(process.execPath, [process.argv[1]], { stdio: ['pipe', 'ignore', 'ignore'] })
      : spawn(process.execPath, [${JSON.stringify(runAgent)}, 'job', '--agent', 'tree', '--prompt', childPrompt], { stdio: 'ignore' });
    if (bare) child.stdin.end(childPrompt);
    child.on('exit', resolve);
  }));
  const held = new Promise((r) => setTimeout(r, ${SECONDS * 1000}));
  Promise.all([...children, held]).then(() => {
    if (depth === 0) fs.writeFileSync(process.env.JRUN_TASK_FOLDER + '/DONE', '');
    console.log('held ' + hold.length);
    process.exit(0);
  });
};
let prompt = '';
process.stdin.setEncoding('utf8').on('data', (s) => (prompt += s)).on('end', () => run(prompt));
`, { mode: 0o755 });
const config = path.join(dir, 'config.yaml');
fs.writeFileSync(config, ['agents:', '  tree:', '    type: command', `    command: ${agent}`, 'defaults:', '  agent: tree', ''].join('\n'));

/** The runner processes of this bench: node running bin/run-agent. */
function runnerPids() {
  const pids = [];
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (argv[1] === runAgent) pids.push(Number(p));
    } catch {
      // ended while listing
    }
  }
  return pids;
}
const lines = () => (fs.existsSync(spawned) ? fs.readFileSync(spawned, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' ')) : []);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Baseline: a bare `node` process spawned by this one, spawn → its first instruction (p50 of 5). */
async function bareSpawn() {
  const lat = [];
  for (let i = 0; i < 5; i++) {
    const t = clock();
    const out = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(Number(process.hrtime.bigint() / 1000n) / 1000))'], { encoding: 'utf8' });
    lat.push(Number(out.stdout) - t);
  }
  return pct(lat, 50);
}

(async () => {
  const bare = await bareSpawn();
  const env = { ...process.env, HOME: dir };
  for (const k of Object.keys(env)) if (/^(JRUN_|CONDUCTOR_|RUN_AGENT_ROOT|RUN_AGENT_SUPERVISOR$)/.test(k)) delete env[k];
  const runtimeDir = path.join(dir, 'xdg');
  if (mode === 'supervisor') {
    fs.mkdirSync(runtimeDir, { mode: 0o700 });
    Object.assign(env, { RUN_AGENT_SUPERVISOR: '1', XDG_RUNTIME_DIR: runtimeDir });
  }
  spawnSync('sync');
  const t0 = clock();
  const taskDir = path.join(root, 'tree', 'task-20260101-000000-tree');
  if (mode === 'bare') fs.mkdirSync(taskDir, { recursive: true });
  const rootRunner =
    mode === 'bare'
      ? spawn(process.execPath, [agent], { env: { ...env, TREE_BARE: '1', JRUN_TASK_FOLDER: taskDir }, stdio: ['pipe', 'ignore', 'pipe'] })
      : spawn(process.execPath, [runAgent, 'task', '--root', root, '--config', config, '--project', 'tree', '--task', 'task-20260101-000000-tree',
          '--prompt', 'fan out', '--max-restarts', '0', '--child-poll-interval', '200ms'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (mode === 'bare') rootRunner.stdin.end('fan out');
  let err = '';
  rootRunner.stderr.on('data', (b) => (err += b));
  const exit = new Promise((r) => rootRunner.on('exit', (code) => r(code)));
  // plateau: every agent spawned (leaves hold SECONDS, so the first ones are still alive)
  const deadline = clock() + SECONDS * 1000 * 0.8;
  while (clock() < deadline && lines().length < CHILDREN + 1) await sleep(100);
  const fillMs = lines().length >= CHILDREN + 1 ? clock() - t0 : undefined;
  const mem = [...runnerPids(), ...supervisors(runtimeDir)].map(rollup).filter(Boolean);
  const code = await exit;
  const all = lines();
  const ids = all.map((l) => l[0]);
  const distinct = new Set(ids);
  const latencies = all.filter((l) => l[0] !== '0').map((l) => Number(l[1]));
  const sum = (k) => mem.reduce((a, m) => a + m[k], 0);
  const done = fs.existsSync(path.join(taskDir, 'DONE'));
  process.stdout.write(JSON.stringify({
    agents: distinct.size, bare, fillMs, p50: pct(latencies, 50), p99: pct(latencies, 99), sampled: mem.length,
    pssTotal: sum('pss'), rssTotal: sum('rss'), pssPer: sum('pss') / Math.max(1, mem.length), rssPer: sum('rss') / Math.max(1, mem.length),
    lost: CHILDREN + 1 - distinct.size + (code === 0 && done ? 0 : 1), doubled: ids.length - distinct.size, error: code === 0 ? undefined : err.trim().split('\n').pop(),
  }));
})().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
