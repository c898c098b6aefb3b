import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait';

export const NATS_SERVER = process.env.NATS_SERVER_BIN || 'nats-server';

/** True when a nats-server binary answers --version (Debian `nats-server`). */
export function natsServerAvailable(): boolean {
  return spawnSync(NATS_SERVER, ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * A real nats-server with JetStream on 127.0.0.1: a random port on first start (read from its
 * log), the same port and store on restart, so clients reconnect to it.
 */
export class NatsServerProcess {
  readonly dir = mkdtempSync(join(tmpdir(), 'nats-'));
  private child?: ChildProcess;
  port = 0;
  url = '';

  /** `extraArgs`: e.g. `['--auth', token]` or TLS options. */
  constructor(private readonly extraArgs: string[] = []) {}

  async start(): Promise<this> {
    const args = ['-js', '-a', '127.0.0.1', '-p', this.port ? String(this.port) : '-1', '-sd', join(this.dir, 'store'), ...this.extraArgs];
    const child = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let log = '';
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    // -p -1 picks a random free port; the server logs the one it bound
    const m = await waitFor('nats-server to be ready', () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited: ${log}`);
      return /Server is ready/.test(log) && /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log);
    }).catch((err: Error) => {
      child.kill('SIGKILL');
      throw new Error(`nats-server did not start: ${err.message}\n${log}`);
    });
    this.port = Number(m[1]);
    // the NATS client verifies a certificate by host name (not by IP SAN): TLS tests use localhost
    this.url = this.extraArgs.includes('--tls') ? `tls://localhost:${this.port}` : `nats://127.0.0.1:${this.port}`;
    return this;
  }

  /** SIGTERM (a clean shutdown) by default; `SIGKILL` is a crash (JetStream state not yet flushed is lost). */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
