'use strict';
// SSE at scale (#15): 500 clients on one project bus of a server in its own process, messages
// appended at 100/s for 5 s by another writer. Figures: share of (client, message) deliveries
// that arrived, p99 lag from the start of the append to a client's receipt, and the server's peak
// RSS (/proc VmHWM) over the whole run (500 open streams included).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const CLIENTS = Number(process.env.BENCH_SSE_CLIENTS || 500);
const RATE = 100;
const SECONDS = 5;
const P = 'ssescale';
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const { procStatusMb, sleep } = require('./timing');

function percentile(values, p) {
  const s = Float64Array.from(values).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** One SSE client: counts `p<i>` bodies and records each arrival's lag against postedAt[i]. */
function openClient(port, postedAt, lags) {
  return new Promise((resolve, reject) => {
    const client = { seen: 0, seeded: false, req: undefined };
    client.req = http.get({ host: '127.0.0.1', port, path: `/api/projects/${P}/messages/stream`, agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let carry = '';
      res.on('data', (chunk) => {
        const at = nowMs();
        const text = carry + chunk;
        const cut = text.lastIndexOf('\n\n');
        if (cut < 0) {
          carry = text;
          return;
        }
        carry = text.slice(cut + 2);
        const done = text.slice(0, cut);
        if (!client.seeded && done.includes('"body":"seed"')) {
          client.seeded = true;
          resolve(client);
        }
        for (const m of done.matchAll(/"body":"p(\d+)"/g)) {
          client.seen++;
          lags.push(at - postedAt[Number(m[1])]);
        }
      });
      res.on('error', () => undefined);
    });
    client.req.on('error', reject);
  });
}

/** Starts `args` as the server, opens the clients, posts, and measures; the server is killed at the end. */
async function scenario(args, env, writer) {
  const server = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const clients = [];
  try {
    const port = await new Promise((resolve, reject) => {
      let out = '';
      server.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    const total = RATE * SECONDS;
    const postedAt = new Float64Array(total);
    const lags = [];
    for (let i = 0; i < CLIENTS; i++) clients.push(await openClient(port, postedAt, lags));
    const rssOpen = procStatusMb(server.pid, 'VmRSS');
    const t0 = nowMs();
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - nowMs();
      if (wait > 0) await sleep(wait);
      postedAt[i] = nowMs();
      await writer.append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: `p${i}` });
    }
    const postSeconds = (nowMs() - t0) / 1000;
    const deadline = Date.now() + 60_000;
    while (clients.some((c) => c.seen < total) && Date.now() < deadline) await sleep(20);
    return {
      delivered: clients.reduce((n, c) => n + c.seen, 0) / (total * CLIENTS),
      p99: percentile(lags, 99),
      p50: percentile(lags, 50),
      peak: procStatusMb(server.pid, 'VmHWM'),
      rssOpen,
      postSeconds,
    };
  } finally {
    for (const c of clients) c.req.destroy();
    server.kill(process.env.BENCH_SSE_PROF ? 'SIGINT' : 'SIGKILL');
  }
}

function newBus(ctx, BusWriter, name) {
  const root = ctx.tmpDir(`bench-sse-${name}-`);
  fs.mkdirSync(path.join(root, P));
  const file = path.join(root, P, 'PROJECT-MESSAGE-BUS.md');
  return { root, file, writer: new BusWriter(file) };
}

module.exports.run = async (ctx) => {
  const serverJs = path.join(ctx.root, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js');
  if (!fs.existsSync(serverJs)) return [{ name: 'SSE scale bench skipped (run `npx nest build api`)', value: 0, unit: '', better: 'higher' }];
  const { BusWriter } = ctx.lib('messagebus');
  const seed = { type: 'INFO', project_id: P, task_id: '', run_id: '', body: 'seed' };

  const ours = newBus(ctx, BusWriter, 'ours');
  await ours.writer.append(seed);
  const probe = `require(${JSON.stringify(serverJs)}).startServer({ root: ${JSON.stringify(ours.root)}, host: '127.0.0.1', port: 0, portExplicit: true })
    .then(({ port }) => process.stdout.write(port + '\\n')); process.once('SIGINT', () => process.exit(0));`;
  const prof = process.env.BENCH_SSE_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SSE_PROF}`] : [];
  const a = await scenario([...prof, '-e', probe], { ...process.env, HOME: ours.root, NODE_ENV: 'production' }, ours.writer);
  ours.writer.close();

  const floor = newBus(ctx, BusWriter, 'floor');
  await floor.writer.append(seed);
  const f = await scenario([...prof, path.join(__dirname, 'sse-floor.js'), floor.file], process.env, floor.writer);
  floor.writer.close();

  return [
    { name: `SSE ${CLIENTS} clients, ${RATE} posts/s for ${SECONDS} s: deliveries`, value: a.delivered * 100, unit: '%', target: 100, better: 'higher',
      note: `posting took ${a.postSeconds.toFixed(1)} s` },
    { name: `SSE ${CLIENTS} clients: p99 lag append→client`, value: a.p99, unit: 'ms', target: 200, better: 'lower',
      note: `median ${a.p50.toFixed(1)} ms; bare node:http fan-out floor (sse-floor.js) p99 ${f.p99.toFixed(1)} ms, median ${f.p50.toFixed(1)} ms, ${(f.delivered * 100).toFixed(1)} % delivered, in the same run` },
    { name: `SSE ${CLIENTS} clients: server peak RSS (VmHWM)`, value: a.peak, unit: 'MB', target: 250, better: 'lower',
      note: `${a.rssOpen.toFixed(0)} MB with the streams open, before posting; floor peak ${f.peak.toFixed(0)} MB` },
  ];
};
