import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { REPO, Sandbox, type CliResult } from '../cli/inspect-helpers';

function conductor(sb: Sandbox, args: string[]): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(REPO, 'bin', 'conductor'), ...args], { cwd: sb.dir, env: sb.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

describe('run-agent worker / conductor --nats usage errors', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  it.each([
    [[], 'Error: --nats is required (e.g. --nats nats://127.0.0.1:4222)'],
    [['--nats', 'http://127.0.0.1:4222'], 'Error: invalid NATS URL "http://127.0.0.1:4222": expected nats://host:port'],
    [['--nats', 'nats://127.0.0.1:4222', '--host', 'Bad.Host'], 'Error: invalid worker host id "Bad.Host": use 1-63 lowercase letters, digits and hyphens'],
    [['--nats', 'nats://127.0.0.1:4222', '--capacity', '0'], 'Error: invalid --capacity "0": expected an integer ≥ 1'],
    [['--nats', 'nats://127.0.0.1:4222', '--lease', '100ms'], 'Error: invalid --lease "100ms": must be at least 1s'],
    [['--nats', 'nats://127.0.0.1:4222', '--nats-user', 'u'], 'Error: --nats-user needs --nats-password (or CONDUCTOR_NATS_PASSWORD)'],
    [['--nats', 'nats://127.0.0.1:4222', '--nats-token', 't', '--nats-creds', '/nonexistent.creds'], 'Error: choose one NATS authentication: --nats-token, --nats-user/--nats-password or --nats-creds (got a token and a creds file)'],
  ])('run-agent worker %j: one line, exit 2, nothing on disk', async (args, message) => {
    const r = await sb.run(['worker', '--root', sb.root, ...args]);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `${message}\n`]);
    expect(readdirSync(sb.root)).toEqual([]);
  });

  it('a worker that cannot reach NATS at start says so in one line (exit 1)', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    await new Promise((r) => srv.close(r)); // a port nothing listens on
    const r = await sb.run(['worker', '--root', sb.root, '--nats', `nats://127.0.0.1:${port}`, '--host', 'w1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^Error: cannot connect to NATS at nats://127\\.0\\.0\\.1:${port}: .+\n$`));
  });

  it('conductor --nats with a bad URL is a usage error before anything starts', async () => {
    const r = await conductor(sb, ['--root', sb.root, '--port', '0', '--nats', 'localhost:4222']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('Error: invalid NATS URL "localhost:4222": expected nats://host:port\n');
    expect(readdirSync(sb.root)).toEqual([]);
  });

  it('conductor --nats with a missing credentials file is a usage error before anything starts', async () => {
    const r = await conductor(sb, ['--root', sb.root, '--port', '0', '--nats', 'nats://127.0.0.1:4222', '--nats-creds', '/nonexistent.creds']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('Error: --nats-creds "/nonexistent.creds": not a readable file\n');
    expect(readdirSync(sb.root)).toEqual([]);
  });
});
