'use strict';
/* global fetch */
// Server start (#15), measured from outside the process: spawn → first answer of
// /api/v1/health (the whole process: node start, module loading, Nest init, listen), then VmRSS
// from /proc after 2 s idle, and once 35 s after start (the watchdog's first probe is at 30 s). The figure is the path users run: a bare `bin/conductor` (launcher,
// CLI bundle, fast path, API server bundle through Node's compile cache; settings from CONDUCTOR_*).
// Interleaved with `node -e 0`, the same with the API's tsc build (CONDUCTOR_API_UNBUNDLED=1),
// startServer() of the tsc build required directly (the server without the CLI), and the NestJS +
// Fastify floor (server-floor.js: one controller, nothing of ours), unbundled and bundled with the
// API bundle's webpack settings (built here into a temp folder, loaded through Node's compile cache
// too), so the notes carry same-run ratios.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { median, procStatusMb, sleep } = require('./timing');

/** Spawns `args`, waits for the port line, polls health until it answers; then idles `idleMs` and reads RSS. */
async function measure(args, env, idleMs = 2000) {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        // bin/conductor prints `API listening on http://host:port/`; the probes print the port alone
        const m = /API listening on http:\/\/[^\s]+:(\d+)\//.exec(out) ?? /^(\d+)\n/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`server exited ${code} before listening`)));
    });
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
        await res.arrayBuffer();
        if (res.ok) break;
      } catch { /* not answering yet */ }
      await sleep(2);
    }
    const ready = Number(process.hrtime.bigint() - t0) / 1e6;
    await sleep(idleMs);
    return { ready, rss: procStatusMb(child.pid, 'VmRSS') };
  } finally {
    child.kill('SIGKILL');
  }
}

/** The floor app bundled as scripts/bundle-api.js bundles the server: the same webpack settings (lazy requires included). */
async function buildBundledFloor(ctx) {
  const dir = ctx.tmpDir('bench-floor-bundle-');
  const entry = path.join(dir, 'entry.js');
  fs.writeFileSync(entry, [
    "'use strict';",
    `module.exports = require(${JSON.stringify(path.join(__dirname, 'server-floor-app.js'))});`,
    '',
  ].join('\n'));
  const { config } = require(path.join(ctx.root, 'scripts', 'bundle-api.js'));
  const { runWebpack } = require(path.join(ctx.root, 'scripts', 'bundle-cli.js'));
  const file = path.join(dir, 'floor.js');
  await runWebpack({ ...config, entry, output: { ...config.output, path: dir, filename: path.basename(file), clean: false } }, file);
  return file;
}

module.exports.run = async (ctx) => {
  const apiDist = path.join(ctx.root, 'dist', 'apps', 'api', 'apps', 'api', 'src');
  const serverJs = path.join(apiDist, 'server.js');
  if (!fs.existsSync(serverJs)) return [{ name: 'server start bench skipped (run `npx nest build api`)', value: 0, unit: '', better: 'higher' }];
  const root = ctx.tmpDir('bench-srv-');
  const env = { ...process.env, HOME: root, NODE_ENV: 'production' };
  const conductorEnv = { ...env, CONDUCTOR_HOST: '127.0.0.1', CONDUCTOR_PORT: '0', CONDUCTOR_ROOT: root, CONDUCTOR_CONFIG: '', CONDUCTOR_API_KEY: '' };
  const probe = `require(${JSON.stringify(serverJs)}).startServer({ root: ${JSON.stringify(root)}, host: '127.0.0.1', port: 0, portExplicit: true })
    .then(({ port }) => process.stdout.write(port + '\\n'))`;
  const floorArgs = [path.join(__dirname, 'server-floor.js'), path.join(apiDist, 'boot', 'lean-server.js')];
  const bundledFloorArgs = [path.join(__dirname, 'server-floor.js'), '--bundle', await buildBundledFloor(ctx)];
  const base = [];
  const ours = [];
  const direct = [];
  const floor = [];
  const bundledFloor = [];
  const unbundled = [];
  await measure([ctx.bin('conductor')], conductorEnv); // a first run writes the bundle's compile cache
  await measure(bundledFloorArgs, env); // and the floor bundle's
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    spawnSync(process.execPath, ['-e', '0']);
    base.push(Number(process.hrtime.bigint() - t0) / 1e6);
    ours.push(await measure([ctx.bin('conductor')], conductorEnv));
    unbundled.push(await measure([ctx.bin('conductor')], { ...conductorEnv, CONDUCTOR_API_UNBUNDLED: '1' }));
    direct.push(await measure(['-e', probe], env));
    floor.push(await measure(floorArgs, env));
    bundledFloor.push(await measure(bundledFloorArgs, env));
  }
  // the steady state: after the watchdog's first probe (30 s after listening) and V8's own idle GC;
  // three servers at once, as idle servers do not compete
  const steady = await Promise.all([0, 1, 2].map(() => measure([ctx.bin('conductor')], conductorEnv, 35000)));
  const b = median(base);
  const ready = median(ours.map((o) => o.ready));
  const rss = median(ours.map((o) => o.rss));
  const directReady = median(direct.map((o) => o.ready));
  const directRss = median(direct.map((o) => o.rss));
  const unbundledReady = median(unbundled.map((o) => o.ready));
  const unbundledRss = median(unbundled.map((o) => o.rss));
  const floorReady = median(floor.map((o) => o.ready));
  const floorRss = median(floor.map((o) => o.rss));
  const bundledFloorReady = median(bundledFloor.map((o) => o.ready));
  const bundledFloorRss = median(bundledFloor.map((o) => o.rss));
  return [
    { name: 'server start until health answers, bin/conductor, whole process (median)', value: ready, unit: 'ms', target: 400, better: 'lower',
      note: `${(ready / b).toFixed(1)}× node -e 0 (${b.toFixed(0)} ms); with the API's tsc build (CONDUCTOR_API_UNBUNDLED=1) ${unbundledReady.toFixed(0)} ms; startServer() required directly ${directReady.toFixed(0)} ms; NestJS+Fastify floor ${floorReady.toFixed(0)} ms unbundled (${(ready / floorReady).toFixed(2)}× floor), ${bundledFloorReady.toFixed(0)} ms bundled like the API (${(ready / bundledFloorReady).toFixed(2)}× bundled floor) in the same run` },
    { name: 'server idle RSS after 2 s, bin/conductor, /proc VmRSS (median)', value: rss, unit: 'MB', target: 60, better: 'lower',
      note: `with the API's tsc build ${unbundledRss.toFixed(1)} MB; startServer() required directly ${directRss.toFixed(1)} MB; NestJS+Fastify floor ${floorRss.toFixed(1)} MB unbundled (${(rss / floorRss).toFixed(2)}× floor), ${bundledFloorRss.toFixed(1)} MB bundled like the API (${(rss / bundledFloorRss).toFixed(2)}× bundled floor)` },
    { name: 'server idle RSS 35 s after start (the watchdog has probed once), bin/conductor, /proc VmRSS (median of 3)', value: median(steady.map((o) => o.rss)), unit: 'MB', target: 60, better: 'lower' },
  ];
};
