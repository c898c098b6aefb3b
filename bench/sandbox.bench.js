'use strict';
// Start overhead of `sandbox: bwrap` per agent (issue #35, target ≤ 50 ms): the time until a
// trivial agent (/bin/true) has run and exited, sandboxed minus unconfined, interleaved in the
// same run and reduced to medians. Figures: the bwrap sandbox alone (namespaces + mounts); the whole
// per-run cost with the egress proxy and its in-sandbox forwarder as runs start it (perl binds the
// forwarder's port, the agent starts at once); and, for comparison in the same run, the slow start
// used when there is no system perl (the agent waits until the node forwarder listens).
// docs/decisions/sandbox-egress-start.md has the figures before and after.
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

/** One run the way openSandbox starts it without a system perl: the agent waits for the node forwarder. */
async function slowStart(sb, req, dir, env) {
  const t0 = process.hrtime.bigint();
  const socketDir = fs.mkdtempSync(path.join(dir, 'egress-'));
  const proxy = await sb.startEgressProxy({ socketPath: path.join(socketDir, 'proxy.sock'), allow: [], onDecision: () => undefined });
  const cmd = sb.sandboxedCommand(req, { socketDir, socketName: 'proxy.sock', port: sb.EGRESS_PORT, node: process.execPath });
  await timeRun(cmd.command, cmd.args, { cwd: req.cwd, env });
  await proxy.close();
  fs.rmSync(socketDir, { recursive: true, force: true });
  return msSince(t0);
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
  const slowEgress = [];
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
    slowEgress.push(await slowStart(sb, req, dir, env));
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
      note: `what a sandboxed run pays: proxy start, bwrap, perl binds the forwarder's port (${sb.systemPerl() ? 'system perl' : 'NO system perl: slow start'})`,
    },
    {
      name: 'sandbox start overhead: egress slow start, agent waits for the node forwarder (median)',
      value: median(slowEgress) - b,
      unit: 'ms',
      better: 'lower',
      note: 'the start without a system perl (and the only start before the fast one)',
    },
  ];
}

module.exports = { run };
