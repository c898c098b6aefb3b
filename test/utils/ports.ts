import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

/**
 * Servers under test bind port 0 and report the port they got (conductor / run-agent serve print
 * `API listening on http://<host>:<port>/`). There is deliberately no "find a free port" helper:
 * a port released before the server binds it can be taken by a parallel process.
 */

/** Binds a port on 127.0.0.1 and keeps it bound until `close()` (for "port in use" cases). */
export async function holdPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The kernel's range for port-0 binds: a port in it came from `--port 0`, not from a default. */
export function ephemeralPortRange(): [number, number] {
  const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return [lo, hi];
}

/** The port a conductor / run-agent serve child announced on stdout (`API listening on http://h:p/`). */
export function announcedPort(output: string): number | undefined {
  const m = /API listening on http:\/\/[^\s/]+:(\d+)\//.exec(output);
  return m ? Number(m[1]) : undefined;
}
