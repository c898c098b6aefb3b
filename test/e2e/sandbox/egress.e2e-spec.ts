import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readEgressBytes, runJob, usageReport } from '@app/runner';
import { renderUsage } from '../../../apps/cli/src/commands/usage/usage.command';
import { loadConfig, RunsLayout } from '@app/storage';
import { createApiApp } from '../../utils/api-app';
import { agentEnv, busMessages, PROJECT, taskId } from '../runner/helpers';
import { loopParts } from '../../utils/loop-parts';

/* The sandbox's empty network namespace and the egress proxy: real bwrap, real sockets. */

const PROBE = `#!/usr/bin/env node
const http = require('http');
const net = require('net');
const proxy = new URL(process.env.HTTP_PROXY);
const viaProxy = (port) => new Promise((resolve) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, path: 'http://127.0.0.1:' + port + '/hello' }, (res) => {
    let body = '';
    res.on('data', (c) => (body += c));
    res.on('end', () => resolve(res.statusCode + ' ' + body.trim()));
  });
  req.on('error', (e) => resolve('error ' + e.code));
  req.end();
});
const direct = (port) => new Promise((resolve) => {
  const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve('connected'); });
  s.on('error', (e) => resolve('error ' + e.code));
});
const tunnel = (port) => new Promise((resolve) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: '127.0.0.1:' + port });
  req.on('connect', (res, socket) => { socket.destroy(); resolve('connect ' + res.statusCode); });
  req.on('error', (e) => resolve('error ' + e.code));
  req.end();
});
(async () => {
  const a = process.env.ALLOWED_PORT, d = process.env.DENIED_PORT;
  console.log('direct-allowed ' + (await direct(a)));
  console.log('direct-denied ' + (await direct(d)));
  console.log('proxy-allowed ' + (await viaProxy(a)));
  console.log('proxy-denied ' + (await viaProxy(d)));
  console.log('connect-denied ' + (await tunnel(d)));
})();
`;

// connects the moment it starts (bash is up long before node): the forwarder's port is bound
// before the agent runs, so the request waits for the forwarder instead of being refused
const QUICK_PROBE = `#!/bin/bash
exec 3<>/dev/tcp/127.0.0.1/3128 || { echo "connect failed"; exit 9; }
printf 'GET http://127.0.0.1:%s/hello HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' "$ALLOWED_PORT" >&3
cat <&3
`;

function listen(name: string): Promise<Server> {
  const server = createServer((_req, res) => res.end(`hello from ${name}\n`));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
const portOf = (s: Server) => (s.address() as AddressInfo).port;

describe('sandbox egress: only the allow-list, only through the proxy', () => {
  let dir: string;
  let allowed: Server;
  let denied: Server;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-egress-'));
    allowed = await listen('allowed');
    denied = await listen('denied');
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'net-probe'), PROBE);
    chmodSync(join(dir, 'bin', 'net-probe'), 0o755);
    writeFileSync(join(dir, 'bin', 'quick-probe'), QUICK_PROBE);
    chmodSync(join(dir, 'bin', 'quick-probe'), 0o755);
    mkdirSync(join(dir, 'home'));
    mkdirSync(join(dir, 'worktree'));
    writeFileSync(
      join(dir, 'config.yaml'),
      `agents:\n  probe:\n    type: command\n    command: ${join(dir, 'bin', 'net-probe')}\n    sandbox: bwrap\n    allow_hosts: ["127.0.0.1:${portOf(allowed)}"]\n` +
        `  quick:\n    type: command\n    command: ${join(dir, 'bin', 'quick-probe')}\n    sandbox: bwrap\n    allow_hosts: ["127.0.0.1:${portOf(allowed)}"]\n`,
    );
  });
  afterAll(async () => {
    await new Promise((r) => allowed.close(r));
    await new Promise((r) => denied.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('allowed host through the proxy works; direct connections and other hosts are denied and logged', async () => {
    const root = join(dir, 'runs');
    const task = taskId('egress');
    const result = await runJob({
      ...loopParts,
      root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'probe the network',
      agent: 'probe',
      cwd: join(dir, 'worktree'),
      config: loadConfig(join(dir, 'config.yaml')),
      env: agentEnv({ HOME: join(dir, 'home'), ALLOWED_PORT: String(portOf(allowed)), DENIED_PORT: String(portOf(denied)), NO_PROXY: '127.0.0.1,localhost' }),
    });
    expect(result.error).toBeUndefined();
    const out = readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8').trim().split('\n');
    expect(out).toEqual([
      'direct-allowed error ECONNREFUSED',
      'direct-denied error ECONNREFUSED',
      'proxy-allowed 200 hello from allowed',
      `proxy-denied 403 egress denied: 127.0.0.1:${portOf(denied)}`,
      'connect-denied connect 403',
    ]);
    const bus = busMessages(new RunsLayout(root).taskBus(PROJECT, task));
    const egress = bus.filter((m) => m.type.startsWith('EGRESS_')).map((m) => `${m.type} ${m.body.split('\n')[0]}`);
    expect(egress).toEqual([
      `EGRESS_ALLOWED egress allowed: 127.0.0.1:${portOf(allowed)}`,
      `EGRESS_DENIED egress denied: 127.0.0.1:${portOf(denied)}`,
      `EGRESS_DENIED egress denied: 127.0.0.1:${portOf(denied)}`,
    ]);
    expect(bus.find((m) => m.type === 'EGRESS_DENIED')?.body).toContain(`host: 127.0.0.1\nport: ${portOf(denied)}`);

    // bytes per host:port, counted by the proxy, in the run's folder and in the usage report (issue #35)
    const bytes = readEgressBytes(result.runDir)!;
    const allowedKey = `127.0.0.1:${portOf(allowed)}`;
    // plain HTTP counts the bodies both ways: the GET sent none, the response is the line the probe printed
    expect(bytes[allowedKey]).toBe('hello from allowed\n'.length);
    expect(Object.keys(bytes)).toEqual([allowedKey]);
    const report = usageReport({ layout: new RunsLayout(root), projectId: PROJECT, taskId: task });
    expect(report.egress_bytes).toEqual(bytes);
    expect(renderUsage(report)).toContain(`egress  ${allowedKey}  ${bytes[allowedKey]}\n`);
    expect(usageReport({ layout: new RunsLayout(join(dir, 'no-runs')) }).egress_bytes).toBeUndefined();

    // the API's run views carry the sandbox and the counts (the dashboard's run header shows them)
    const api = await createApiApp({ root });
    try {
      const runId = result.runDir.split('/').pop()!;
      const one = (await api.app.inject({ method: 'GET', url: `/api/projects/${PROJECT}/tasks/${task}/runs/${runId}` })).json();
      expect([one.sandbox, one.egress_bytes]).toEqual(['bwrap', bytes]);
      const flat = (await api.app.inject({ method: 'GET', url: `/api/projects/${PROJECT}/runs/flat` })).json();
      const row = (flat.runs as { id: string; sandbox?: string; egress_bytes?: object }[]).find((r) => r.id === runId);
      expect([row?.sandbox, row?.egress_bytes]).toEqual(['bwrap', bytes]);
      expect((await api.app.inject({ method: 'GET', url: '/api/v1/usage' })).json().egress_bytes).toEqual(bytes);
    } finally {
      await api.close();
    }
  });

  it('an agent that connects the moment it starts is served, not refused', async () => {
    const root = join(dir, 'runs-quick');
    const task = taskId('quick');
    const result = await runJob({
      ...loopParts,
      root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'connect at once',
      agent: 'quick',
      cwd: join(dir, 'worktree'),
      config: loadConfig(join(dir, 'config.yaml')),
      env: agentEnv({ HOME: join(dir, 'home'), ALLOWED_PORT: String(portOf(allowed)) }),
    });
    expect(result.error).toBeUndefined();
    const out = readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8');
    expect(out).toMatch(/^HTTP\/1\.1 200 /);
    expect(out.trim().split('\n').pop()).toBe('hello from allowed');
  });
});
