'use strict';
// API server figures: REST latency over a runs root with 1000 runs (warm index cache), and SSE
// fan-out latency (one shared tail per file, many clients). Needs `nest build api`.
const fs = require('node:fs');
const path = require('node:path');
const { followSse, median, medianLatency, msSince, throughput, waitFor } = require('./timing');
const { seedFinishedRuns } = require('./run-fixtures');

/** Median time of one pass of stat over `paths` (what the storage index's freshness check costs at least). */
function statFloor(paths) {
  const times = [];
  for (let i = 0; i < 30; i++) {
    const t0 = process.hrtime.bigint();
    for (const p of paths) fs.statSync(p, { throwIfNoEntry: false });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(times);
}

/** Opens `n` SSE clients, each counting the events `match` accepts. */
async function openClients(url, n, match) {
  const clients = [];
  for (let i = 0; i < n; i++) {
    const client = { seen: 0 };
    client.stream = await followSse(url, (b) => {
      if (match(b)) client.seen++;
    });
    clients.push(client);
  }
  return clients;
}

function waitAll(clients, count) {
  return waitFor('every SSE client to receive its events', () => clients.every((c) => c.seen >= count), 30000, 5);
}

module.exports.run = async (ctx) => {
  const serverJs = path.join(ctx.root, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js');
  if (!fs.existsSync(serverJs)) return [{ name: 'api bench skipped (run `npx nest build api`)', value: 0, unit: '', better: 'higher' }];
  const { startServer } = require(serverJs);
  const storage = ctx.lib('storage');
  const { BusWriter } = ctx.lib('messagebus');
  const root = ctx.tmpDir('bench-api-');
  const P = 'bench';
  // a consistent read stats every task's runs folder and every run-info not yet final (storage-index.ts)
  const freshnessPaths = [path.join(root, P), ...seedFinishedRuns(storage, root, P)];
  const { app, url } = await startServer({ root, host: '127.0.0.1', port: 0, portExplicit: true, sse: { heartbeatIntervalMs: 60000 } });
  const figures = [];
  try {
    await medianLatency(`${url}/api/projects/${P}/tasks?limit=500`, 2); // warm the index cache
    figures.push({ name: 'GET project tasks (200 tasks, 1000 runs), median', value: await medianLatency(`${url}/api/projects/${P}/tasks?limit=500`, 20), unit: 'ms', target: 100, better: 'lower' });
    const page = `${url}/api/projects/${P}/tasks?limit=50`;
    await throughput(page, 10, 300); // warm-up
    figures.push({ name: 'GET project tasks limit=50 (200 tasks), 10 in flight', value: await throughput(page, 10, 3000), unit: 'rps', target: 100, better: 'higher', note: 'summaries only for the page' });
    await medianLatency(`${url}/api/projects/${P}/runs/flat`, 5);
    figures.push({ name: 'GET project runs/flat (1000 runs), median', value: await medianLatency(`${url}/api/projects/${P}/runs/flat`, 30), unit: 'ms', target: 6, better: 'lower',
      note: `finished run-infos are final after a minute; floor: the stats a consistent read still needs (the project's and every task's runs/ folder, ${freshnessPaths.length} paths) take ${statFloor(freshnessPaths).toFixed(1)} ms bare in this run` });
    figures.push({ name: 'GET /api/v1/runs (1000 runs), median', value: await medianLatency(`${url}/api/v1/runs`, 20), unit: 'ms', target: 100, better: 'lower' });
    figures.push({ name: 'GET /api/v1/status, median', value: await medianLatency(`${url}/api/v1/status`, 20), unit: 'ms', target: 50, better: 'lower' });

    // bus fan-out: 100 clients, 20 appends; latency from append to the last client's arrival
    const busPath = path.join(root, P, 'PROJECT-MESSAGE-BUS.md');
    const clients = await openClients(`${url}/api/projects/${P}/messages/stream`, 100, (b) => b.includes('event: message'));
    const writer = new BusWriter(busPath);
    const lat = [];
    for (let i = 1; i <= 20; i++) {
      const t0 = process.hrtime.bigint();
      await writer.append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: `m${i}` });
      await waitAll(clients, i);
      lat.push(msSince(t0));
    }
    clients.forEach((c) => c.stream.close());
    figures.push({ name: 'bus SSE fan-out to 100 clients, median append→all delivered', value: median(lat), unit: 'ms', target: 600, better: 'lower', note: 'one shared BusCursor tail' });

    // log fan-out: 10 clients (the per-run limit) on one run, 200 appended lines
    const task = 'task-20260101-120000-t0000';
    const runId = '20260101-1200000000-1-1';
    const runDir = path.join(root, P, task, 'runs', runId);
    const logClients = await openClients(`${url}/api/v1/runs/${runId}/stream`, 10, (b) => b.includes('event: log'));
    const t0 = process.hrtime.bigint();
    const out = fs.openSync(path.join(runDir, 'agent-stdout.txt'), 'a');
    for (let i = 0; i < 200; i++) fs.writeSync(out, `line ${i}\n`);
    fs.closeSync(out);
    await waitAll(logClients, 200);
    figures.push({ name: 'log SSE: 200 lines to 10 clients, append→all delivered', value: msSince(t0), unit: 'ms', target: 1000, better: 'lower' });
    logClients.forEach((c) => c.stream.close());
  } finally {
    await app.close();
  }
  return figures;
};
