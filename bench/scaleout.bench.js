'use strict';
/* global fetch */
// Scale-out figures (docs/scale-out.md): dispatch latency (POST /api/v1/tasks → the agent's
// start_time on a worker) and replication lag (a bus append on a worker → its SSE event on the
// server), median and p99, with a real nats-server and three `run-agent worker` processes.
// Needs the Debian `nats-server` and `npx nest build api cli`.
const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { followSse, pct, sleep, waitFor } = require('./timing');

const NATS = process.env.NATS_SERVER_BIN || 'nats-server';
async function startNats(dir) {
  const child = spawn(NATS, ['-js', '-a', '127.0.0.1', '-p', '-1', '-sd', path.join(dir, 'nats')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const m = await waitFor('nats-server', () => /Server is ready/.test(log) && /client connections on 127\.0\.0\.1:(\d+)/.exec(log), 15000);
  return { child, url: `nats://127.0.0.1:${m[1]}` };
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    child.once('exit', r);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

module.exports.run = async (ctx) => {
  if (spawnSync(NATS, ['--version'], { stdio: 'ignore' }).status !== 0) {
    console.log(`scaleout bench skipped: ${NATS} not found (Debian: apt-get install nats-server)`);
    return [];
  }
  const serverJs = path.join(ctx.root, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js');
  if (!fs.existsSync(serverJs)) {
    console.log('scaleout bench skipped: run `npx nest build api` first');
    return [];
  }
  const { startServer } = require(serverJs);
  const { readRunInfo } = ctx.lib('storage');
  const { BusWriter } = ctx.lib('messagebus');
  const dir = ctx.tmpDir('bench-scaleout-');
  const agents = path.join(ctx.root, 'test', 'fixtures', 'agents');
  const savedPath = process.env.PATH;
  process.env.PATH = `${agents}${path.delimiter}${savedPath}`;
  const nats = await startNats(dir);
  const workers = [];
  let app;
  const figures = [];
  try {
    const serverRoot = path.join(dir, 'server');
    ({ app } = await startServer({ root: serverRoot, host: '127.0.0.1', port: 0, portExplicit: true, nats: nats.url }));
    const url = `http://127.0.0.1:${app.getHttpServer().address().port}`;
    for (let i = 1; i <= 3; i++) {
      const root = path.join(dir, `w${i}`);
      const child = spawn(process.execPath, [ctx.bin('run-agent'), 'worker', '--nats', nats.url, '--root', root, '--host', `w${i}`, '--capacity', '4'], {
        env: { ...process.env, FAKE_AGENT_DONE: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const w = { child, root, out: '' };
      child.stdout.on('data', (d) => (w.out += d));
      child.stderr.on('data', (d) => (w.out += d));
      workers.push(w);
    }
    for (const w of workers) await waitFor('worker start', () => w.out.includes('pulling from'), 30000);

    const P = 'bench';
    const submit = async (t, env = {}) => {
      const res = await fetch(`${url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: P, task_id: t, agent_type: 'codex', prompt: 'bench', config: env }),
      });
      if (res.status >= 300) throw new Error(`submit ${t}: ${res.status} ${await res.text()}`);
      return res.json();
    };

    // dispatch latency: 30 tasks, one every 100 ms (below capacity: no queueing)
    const sent = [];
    for (let i = 0; i < 30; i++) {
      const t = `task-20260101-000000-d${String(i).padStart(2, '0')}`;
      const at = Date.now();
      const { run_id } = await submit(t);
      sent.push({ t, run_id, at });
      await sleep(100);
    }
    const dispatch = [];
    for (const s of sent) {
      const file = path.join(serverRoot, P, s.t, 'runs', s.run_id, 'run-info.yaml');
      await waitFor(`run-info of ${s.t}`, () => fs.existsSync(file));
      dispatch.push(readRunInfo(file).start_time.getTime() - s.at);
    }
    if (process.env.BENCH_VERBOSE) console.log('dispatch samples', dispatch.join(' '));
    figures.push({ name: 'dispatch latency submit→agent start, median (3 workers)', value: pct(dispatch, 50), unit: 'ms', target: 1000, better: 'lower' });
    figures.push({ name: 'dispatch latency submit→agent start, p99 (3 workers)', value: pct(dispatch, 99), unit: 'ms', target: 3000, better: 'lower' });

    // replication lag: appends to a running task's bus on its worker → SSE event on the server
    const T = 'task-20260101-000000-lag';
    await submit(T, { FAKE_AGENT_SLEEP_MS: '120000' });
    const owner = await waitFor('the lag task on a worker', () => workers.find((w) => fs.existsSync(path.join(w.root, P, T, 'TASK-MESSAGE-BUS.md'))));
    const arrivals = new Map();
    const stream = await followSse(`${url}/api/projects/${P}/tasks/${T}/messages/stream`, (block) => {
      for (const m of block.matchAll(/lag-probe-(\d+)/g)) if (!arrivals.has(m[1])) arrivals.set(m[1], Date.now());
    });
    await sleep(500);
    const writer = new BusWriter(path.join(owner.root, P, T, 'TASK-MESSAGE-BUS.md'));
    const lag = [];
    for (let i = 0; i < 30; i++) {
      const at = Date.now();
      await writer.append({ type: 'PROGRESS', project_id: P, task_id: T, run_id: '', body: `lag-probe-${i}` });
      await waitFor('the SSE event', () => arrivals.has(String(i)), 30000);
      lag.push(arrivals.get(String(i)) - at);
      await sleep(50);
    }
    writer.close();
    // a server-side write (POST a message): routed to the owning worker, confirmed, replicated back
    const confirm = [];
    const roundTrip = [];
    for (let i = 0; i < 20; i++) {
      const at = Date.now();
      const r = await fetch(`${url}/api/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: P, task_id: T, type: 'USER', body: `lag-probe-${100 + i}` }),
      });
      if (r.status !== 201) throw new Error(`post: ${r.status} ${await r.text()}`);
      confirm.push(Date.now() - at);
      await waitFor('the SSE event of the post', () => arrivals.has(String(100 + i)), 30000);
      roundTrip.push(arrivals.get(String(100 + i)) - at);
      await sleep(50);
    }
    stream.close();
    figures.push({ name: 'server task write POST→worker confirmed, median', value: pct(confirm, 50), unit: 'ms', target: 500, better: 'lower' });
    figures.push({ name: 'server task write POST→worker confirmed, p99', value: pct(confirm, 99), unit: 'ms', target: 2000, better: 'lower' });
    figures.push({ name: 'server task write POST→back on the server SSE, median', value: pct(roundTrip, 50), unit: 'ms', target: 1000, better: 'lower' });
    figures.push({ name: 'replication lag worker bus append→server SSE, median', value: pct(lag, 50), unit: 'ms', target: 1000, better: 'lower', note: 'includes the SSE poll interval' });
    figures.push({ name: 'replication lag worker bus append→server SSE, p99', value: pct(lag, 99), unit: 'ms', target: 2000, better: 'lower' });
    await fetch(`${url}/api/v1/tasks/${T}?project_id=${P}`, { method: 'DELETE' });
    await waitFor('the lag task to stop', () => fs.existsSync(path.join(owner.root, P, T, 'DONE')), 30000).catch(() => undefined);
  } finally {
    process.env.PATH = savedPath;
    await Promise.all(workers.map((w) => stopChild(w.child)));
    if (app) await app.close();
    await stopChild(nats.child);
  }
  return figures;
};
