/** The serve watchdog against a real health endpoint on 127.0.0.1. */
import { spawnSync } from 'node:child_process';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { startWatchdog } from '../../../apps/api/src/boot/watchdog';

describe(startWatchdog.name, () => {
  let server: Server;
  let healthy: boolean[];
  let url: string;

  beforeEach(async () => {
    healthy = [];
    // answers each probe from the script, then keeps answering 500
    server = createServer((_req, res) => res.writeHead(healthy.shift() === true ? 200 : 500).end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('gives up after N consecutive failures; a success in between resets the count', async () => {
    healthy = [false, true, false, false];
    const failures: number[] = [];
    const reason = await new Promise<string>((resolve) => {
      startWatchdog({ healthUrl: url, intervalMs: 20, maxFailures: 3, onFailure: (n) => failures.push(n), onGiveUp: resolve });
    });
    expect(failures).toEqual([1, 1, 2, 3]);
    expect(reason).toBe('3 consecutive health check failures (last: status 500)');
  });

  it('counts an unreachable endpoint as a failure', async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server = createServer();
    const reason = await new Promise<string>((resolve) => {
      startWatchdog({ healthUrl: url, intervalMs: 20, maxFailures: 2, onGiveUp: resolve });
    });
    expect(reason).toMatch(/^2 consecutive health check failures \(last: .+\)$/);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  it('counts a health endpoint that does not answer in time as a failure', async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((resolve) => server.listen(Number(new URL(url).port), '127.0.0.1', resolve));
    const reason = await new Promise<string>((resolve) => {
      startWatchdog({ healthUrl: url, intervalMs: 20, maxFailures: 1, probeTimeoutMs: 100, onGiveUp: resolve });
    });
    expect(reason).toBe('1 consecutive health check failures (last: no answer within 100 ms)');
    server.closeAllConnections();
  });

  it('counts an answer cut off before its end as a failure', async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{');
      setImmediate(() => res.socket?.destroy());
    });
    await new Promise<void>((resolve) => server.listen(Number(new URL(url).port), '127.0.0.1', resolve));
    const reason = await new Promise<string>((resolve) => {
      startWatchdog({ healthUrl: url, intervalMs: 20, maxFailures: 1, onGiveUp: resolve });
    });
    expect(reason).toMatch(/^1 consecutive health check failures \(last: (the connection closed before the answer was complete|aborted)\)$/);
  });

  it("probes without Node's fetch: an idle server never loads undici for it", () => {
    // in a process of its own: jest's own process may have loaded undici already
    const watchdog = require.resolve('../../../dist/apps/api/apps/api/src/boot/watchdog.js');
    const script = `
      const { createServer } = require('node:http');
      const { startWatchdog } = require(${JSON.stringify(watchdog)});
      const server = createServer((_req, res) => res.end('{}')).listen(0, '127.0.0.1', () => {
        let probes = 0;
        const url = 'http://127.0.0.1:' + server.address().port + '/healthz';
        server.on('request', () => { if (++probes === 3) setImmediate(() => {
          stop();
          server.close();
          process.stdout.write(JSON.stringify({ probes, undici: process.moduleLoadList.some((m) => m.includes('undici')) }));
        }); });
        const stop = startWatchdog({ healthUrl: url, intervalMs: 10, maxFailures: 1, onGiveUp: (r) => { throw new Error(r); } });
      });`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ probes: 3, undici: false });
  });
});
