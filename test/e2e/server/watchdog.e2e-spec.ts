/** The serve watchdog against a real health endpoint on 127.0.0.1. */
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
});
