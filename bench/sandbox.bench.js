'use strict';
// Start overhead of `sandbox: bwrap` per agent (issue #35, target ≤ 50 ms): the time until a
// trivial agent (/bin/true) has run and exited, sandboxed minus unconfined, interleaved in the
// same run and reduced to medians. Two figures: the bwrap sandbox alone (namespaces + mounts), and
// the whole per-run cost with the egress proxy and its in-sandbox forwarder (node -e).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { median, msSince } = require('./timing');

function timeRun(command, args, opts) {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore', ...opts });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(msSince(t0)) : reject(new Error(`bench: ${command} exited ${code}`))));
  });
}

async function run(ctx) {
  const sb = ctx.lib('sandbox');
  const check = sb.checkSandbox();
  if (!check.ok) return [{ name: 'sandbox start overhead', value: NaN, unit: 'ms', better: 'lower', note: `skipped: ${check.reason}` }];
  const dir = ctx.tmpDir('bench-sandbox-');
  const root = path.join(dir, 'runs');
  const taskDir = path.join(root, 'p', 't');
  fs.mkdirSync(taskDir, { recursive: true });
  const env = { ...process.env };
  const req = { command: '/bin/true', args: [], cwd: taskDir, env, taskDir, runsRoot: root };
  const base = [];
  const bwrapOnly = [];
  const withEgress = [];
  const n = 11;
  for (let i = 0; i < n; i++) {
    base.push(await timeRun('/bin/true', [], { cwd: taskDir, env }));
    const plain = sb.sandboxedCommand(req);
    bwrapOnly.push(await timeRun(plain.command, plain.args, { cwd: taskDir, env }));
    const t0 = process.hrtime.bigint();
    const opened = await sb.openSandbox(req, () => undefined);
    await timeRun(opened.command, opened.args, { cwd: taskDir, env: opened.env });
    await opened.close();
    withEgress.push(msSince(t0));
  }
  const b = median(base);
  return [
    { name: 'baseline: /bin/true unconfined (median, same run)', value: b, unit: 'ms', better: 'lower' },
    { name: 'sandbox start overhead: bwrap only (median)', value: median(bwrapOnly) - b, unit: 'ms', target: 50, better: 'lower', note: `bwrap run ${median(bwrapOnly).toFixed(1)} ms` },
    {
      name: 'sandbox start overhead: bwrap + egress proxy + forwarder (median)',
      value: median(withEgress) - b,
      unit: 'ms',
      target: 50,
      better: 'lower',
      note: 'what a sandboxed run pays: proxy start, node -e forwarder ready, bwrap',
    },
  ];
}

module.exports = { run };
