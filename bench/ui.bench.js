'use strict';
// Dashboard performance in headless Chromium against a synthetic API (node:http, no real runs):
//  - a project with 1,000 tasks and 10,000 runs: time until the task tree is on screen (≤ 1 s);
//  - input latency while 20 runs stream output at 50 lines/s each (≤ 100 ms).
// Needs frontend/dist (npm run build:ui) and /usr/bin/chromium.
/* global document, window, performance, requestAnimationFrame -- code passed to page.evaluate runs in the browser */
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { URL } = require('node:url');

const DIST = path.join(__dirname, '..', 'frontend', 'dist');
const PROJECT = 'bench';
const TASKS = 1000;
const RUNS_PER_TASK = 10;
const STREAMING_RUNS = 20;
const LINES_PER_SECOND = 50;
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

/** 1,000 tasks × 10 runs (each task a restart chain); the latest run of the 20 newest tasks runs. */
function syntheticRuns() {
  const base = Date.UTC(2026, 0, 1);
  const runs = [];
  const tasks = [];
  for (let t = 0; t < TASKS; t++) {
    const taskStart = new Date(base + t * 60_000);
    const stamp = taskStart.toISOString().replace(/[-:]/g, '').slice(0, 15).replace('T', '-');
    const taskId = `task-${stamp}-bench-${pad(t, 4)}`;
    tasks.push(taskId);
    let previous;
    for (let r = 0; r < RUNS_PER_TASK; r++) {
      const start = new Date(taskStart.getTime() + r * 5000);
      const running = t >= TASKS - STREAMING_RUNS && r === RUNS_PER_TASK - 1;
      const id = `${stamp.replace('-', '-')}0000-${1000 + t}-${r + 1}`;
      runs.push({
        id, task_id: taskId, agent: r % 3 === 0 ? 'codex' : 'claude', status: running ? 'running' : r % 4 === 0 ? 'failed' : 'completed',
        exit_code: running ? -1 : r % 4 === 0 ? 1 : 0, start_time: start.toISOString(),
        end_time: running ? '0001-01-01T00:00:00Z' : new Date(start.getTime() + 4000).toISOString(),
        ...(previous ? { previous_run_id: previous } : {}),
      });
      previous = id;
    }
  }
  return { runs, tasks };
}

function logLine(i) {
  return JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: `step ${i}: working on the synthetic benchmark task` }] } });
}

function startSyntheticServer() {
  const { runs, tasks } = syntheticRuns();
  const running = runs.filter((r) => r.status === 'running');
  const flatBody = JSON.stringify({ runs });
  const timers = new Set();
  const sockets = new Set();
  const json = (res, body, status = 200) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const sse = (res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    res.write(': open\n\n');
  };
  const every = (ms, fn, res) => {
    const t = setInterval(fn, ms);
    timers.add(t);
    res.on('close', () => { clearInterval(t); timers.delete(t); });
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const p = url.pathname;
    if (p === '/api/v1/version') return json(res, { version: 'bench' });
    if (p === '/api/projects') return json(res, { projects: [{ id: PROJECT, last_activity: new Date().toISOString(), task_count: TASKS }] });
    if (p === `/api/projects/${PROJECT}/stats`) {
      return json(res, { project_id: PROJECT, total_tasks: TASKS, total_runs: runs.length, running_runs: STREAMING_RUNS, completed_runs: 7000, failed_runs: 2980, crashed_runs: 0, message_bus_files: 1, message_bus_total_bytes: 1234 });
    }
    if (p === `/api/projects/${PROJECT}/runs/flat`) return json(res, flatBody);
    if (p === `/api/projects/${PROJECT}/tasks`) {
      const limit = Number(url.searchParams.get('limit') || 50);
      const offset = Number(url.searchParams.get('offset') || 0);
      const items = tasks.slice(offset, offset + limit).map((id) => ({ id, project_id: PROJECT, status: 'completed', last_activity: '2026-01-01T00:00:00Z', run_count: RUNS_PER_TASK, done: false }));
      return json(res, { items, total: tasks.length, limit, offset, has_more: offset + limit < tasks.length });
    }
    if (p === '/api/v1/runs/stream/all') {
      sse(res);
      let i = 0;
      // 20 runs × 50 lines/s, sent in 20 ms batches.
      every(1000 / LINES_PER_SECOND, () => {
        let out = '';
        for (const run of running) out += `event: log\ndata: ${JSON.stringify({ run_id: run.id, project_id: PROJECT, task_id: run.task_id, stream: 'stdout', line: logLine(i), timestamp: new Date().toISOString() })}\n\n`;
        i++;
        res.write(out);
      }, res);
      return;
    }
    if (p.endsWith('/messages/stream')) {
      sse(res);
      every(15000, () => res.write('event: heartbeat\ndata: {}\n\n'), res);
      return;
    }
    if (p.endsWith('/messages')) return json(res, { messages: [] });
    const m = p.match(/^\/api\/projects\/[^/]+\/tasks\/([^/]+)\/(file|runs\/([^/]+)(\/(file|stream))?)$/);
    if (m) {
      const [, task, , runId, , sub] = m;
      if (!runId) return json(res, { name: 'TASK.md', content: `Benchmark task ${task}\n`, modified: new Date().toISOString(), size_bytes: 20 });
      const run = runs.find((r) => r.id === runId);
      if (!run) return json(res, { error: { code: 'NOT_FOUND', message: 'run not found' } }, 404);
      if (sub === 'stream') {
        sse(res);
        let i = 0;
        every(1000 / LINES_PER_SECOND, () => { res.write(`data: ${logLine(i++)}\ndata: \n\n`); }, res);
        return;
      }
      if (sub === 'file') return json(res, { name: 'stdout', content: Array.from({ length: 200 }, (_, i) => logLine(i)).join('\n') + '\n', modified: new Date().toISOString(), size_bytes: 1 });
      return json(res, { ...run, run_id: run.id, files: [] });
    }
    // static UI
    const rel = p === '/' ? 'index.html' : decodeURIComponent(p.slice(1));
    const file = path.join(DIST, rel);
    if (!file.startsWith(DIST) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404);
      return res.end('not found');
    }
    const type = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.woff2': 'font/woff2', '.woff': 'font/woff' }[path.extname(file)] || 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': type });
    fs.createReadStream(file).pipe(res);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/`,
        running,
        close: () => new Promise((done) => {
          for (const t of timers) clearInterval(t);
          for (const s of sockets) s.destroy();
          server.close(() => done());
        }),
      });
    });
  });
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function run() {
  if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('bench/ui: build the dashboard first (npm run build:ui)');
  const { chromium } = require('playwright-core');
  const srv = await startSyntheticServer();
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const renderTimes = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(srv.url);
      await page.waitForFunction(() => document.querySelectorAll('[role=treeitem]').length > 0, null, { polling: 'raf', timeout: 20000 });
      renderTimes.push(await page.evaluate(() => performance.now()));
    }
    const treeRows = await page.evaluate(() => document.querySelectorAll('[role=treeitem]').length);

    // Open a streaming run (its live log tails at 50 lines/s) while the all-runs stream carries 20 × 50 lines/s.
    const task = srv.running[srv.running.length - 1].task_id;
    await page.getByTitle(`task ${task}`).click();
    await page.getByRole('log', { name: 'Live' }).waitFor();
    await page.waitForTimeout(1500);
    await page.evaluate(() => {
      window.__latencies = [];
      const input = document.querySelector('input[aria-label="Filter tasks"]');
      input.addEventListener('keydown', (e) => {
        const start = e.timeStamp;
        requestAnimationFrame(() => setTimeout(() => window.__latencies.push(performance.now() - start), 0));
      });
    });
    const filter = page.getByLabel('Filter tasks');
    await filter.click();
    // 4 rounds of 16 keystrokes: a p95 of 16 samples would be their maximum, which is printed apart
    for (let round = 0; round < 4; round++) {
      for (const ch of 'bench-00') {
        await page.keyboard.type(ch);
        await page.waitForTimeout(120);
      }
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press('Backspace');
        await page.waitForTimeout(120);
      }
    }
    await page.waitForTimeout(300);
    if (process.env.UI_BENCH_SCREENSHOT) await page.screenshot({ path: process.env.UI_BENCH_SCREENSHOT });
    const latencies = await page.evaluate(() => window.__latencies);
    const lines = await page.evaluate(() => document.querySelector('[role=log][aria-label=Live]')?.getAttribute('aria-label') ? document.querySelector('.log-status')?.textContent : '');
    return [
      { name: 'ui tree first render, 1,000 tasks / 10,000 runs (median of 3, from navigation start)', value: percentile(renderTimes, 50), unit: 'ms', target: 1000, better: 'lower', note: `${treeRows} rows in DOM` },
      { name: 'ui input latency p95 while 20 runs stream 50 lines/s', value: percentile(latencies, 95), unit: 'ms', target: 100, better: 'lower', note: `${latencies.length} keystrokes, live log: ${lines}` },
      { name: 'ui input latency max while 20 runs stream 50 lines/s', value: Math.max(...latencies), unit: 'ms', better: 'lower' },
    ];
  } finally {
    await browser.close();
    await srv.close();
  }
}

module.exports = { run, startSyntheticServer };

if (require.main === module) {
  if (process.argv.includes('--serve')) {
    startSyntheticServer().then((s) => console.log(`synthetic dashboard at ${s.url}`));
  } else {
    run().then((figs) => { for (const f of figs) console.log(`${f.name}: ${f.value.toFixed(1)} ${f.unit}${f.note ? ` — ${f.note}` : ''}`); }, (e) => { console.error(e); process.exit(1); });
  }
}
