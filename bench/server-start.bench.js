'use strict';
// Server start (#15): a fresh `node` process requires the built server, starts it on port 0 and
// reports when /api/v1/health first answered (process uptime) and its RSS after 2 s idle.
// Interleaved with `node -e 0` so the note carries the same-run ratio.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

module.exports.run = async (ctx) => {
  const serverJs = path.join(ctx.root, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js');
  if (!fs.existsSync(serverJs)) return [{ name: 'server start bench skipped (run `npx nest build api`)', value: 0, unit: '', better: 'higher' }];
  const root = ctx.tmpDir('bench-srv-');
  const probe = `
    require(${JSON.stringify(serverJs)}).startServer({ root: ${JSON.stringify(root)}, host: '127.0.0.1', port: 0, portExplicit: true })
      .then(async ({ app, url }) => {
        const res = await fetch(url + '/api/v1/health');
        await res.text();
        const ready = process.uptime() * 1000;
        await new Promise((r) => setTimeout(r, 2000));
        if (global.gc) global.gc();
        process.stdout.write(JSON.stringify({ ready, rss: process.memoryUsage().rss / 1048576 }));
        await app.close();
        process.exit(0);
      });`;
  const base = [];
  const ready = [];
  const rss = [];
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    spawnSync(process.execPath, ['-e', '0']);
    base.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', probe], { encoding: 'utf8', env: { ...process.env, HOME: root } });
    if (r.status !== 0) throw new Error(`server probe failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout);
    ready.push(out.ready);
    rss.push(out.rss);
  }
  const b = median(base);
  return [
    { name: 'server start until health answers (median)', value: median(ready), unit: 'ms', target: 400, better: 'lower', note: `${(median(ready) / b).toFixed(1)}× node -e 0 (${b.toFixed(0)} ms) in the same run` },
    { name: 'server idle RSS after 2 s (median)', value: median(rss), unit: 'MB', target: 60, better: 'lower' },
  ];
};
