import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsServerAvailable } from '../../utils/nats-server';
import { envWithFakeAgents } from '../../utils/fake-agents';
import { Cluster, waitFor } from './cluster';

// Real nats-server started with --auth / --tls; real conductor and worker processes.
const describeNats = natsServerAvailable() ? describe : describe.skip;
const REPO = join(__dirname, '..', '..', '..');

function worker(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(REPO, 'bin', 'run-agent'), 'worker', ...args], { env: envWithFakeAgents({ NODE_ENV: 'test' }), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('close', (code) => done({ code, stderr }));
  });
}

async function runsOneTask(c: Cluster, taskId: string): Promise<void> {
  await c.submit('secure', taskId);
  await waitFor(`${taskId} DONE on the worker and in the replica`, () => existsSync(join(c.workers[0].root, 'secure', taskId, 'DONE')) && existsSync(join(c.server.root, 'secure', taskId, 'DONE')), 60_000);
}

describeNats('NATS authentication and TLS (real nats-server)', () => {
  jest.setTimeout(90_000);

  describe('token (nats-server --auth)', () => {
    const token = 'tok-3f9a1c7e';
    const c = new Cluster({ natsArgs: ['--auth', token], clientArgs: ['--nats-token', token] });
    beforeAll(() => c.start(1));
    afterAll(() => c.dispose());

    it('conductor and the worker authenticate with --nats-token; a task goes through the queue', async () => {
      await runsOneTask(c, 'task-20260101-000000-tok01');
    });

    it('a worker without the token or with a wrong one is refused in one line (exit 1)', async () => {
      const root = join(c.dir, 'intruder');
      for (const extra of [[], ['--nats-token', 'wrong']]) {
        const r = await worker(['--nats', c.nats.url, '--root', root, '--host', 'intruder', ...extra]);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/^Error: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*[Aa]uthorization.*\n$/);
      }
      expect(existsSync(join(root, 'secure'))).toBe(false);
    });
  });

  describe('user and password (nats-server --user/--pass)', () => {
    const c = new Cluster({ natsArgs: ['--user', 'conductor', '--pass', 'pw-81c2'], clientArgs: ['--nats-user', 'conductor', '--nats-password', 'pw-81c2'] });
    beforeAll(() => c.start(1));
    afterAll(() => c.dispose());

    it('conductor and the worker log in with --nats-user/--nats-password; a task goes through the queue', async () => {
      await runsOneTask(c, 'task-20260101-000000-usr01');
    });

    it('a wrong password is refused in one line (exit 1)', async () => {
      const r = await worker(['--nats', c.nats.url, '--root', join(c.dir, 'intruder'), '--host', 'intruder', '--nats-user', 'conductor', '--nats-password', 'wrong']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^Error: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*[Aa]uthorization.*\n$/);
    });
  });

  describe('TLS (nats-server --tls) with --nats-tls-ca', () => {
    const certs = mkdtempSync(join(tmpdir(), 'nats-tls-'));
    const ssl = (...args: string[]) => {
      const r = spawnSync('openssl', args, { cwd: certs, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
    };
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=conductor-test-ca');
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
    writeFileSync(join(certs, 'san.ext'), 'subjectAltName=DNS:localhost\n');
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext');
    const c = new Cluster({
      natsArgs: ['--tls', '--tlscert', join(certs, 'server.pem'), '--tlskey', join(certs, 'server.key')],
      clientArgs: ['--nats-tls-ca', join(certs, 'ca.pem')],
    });
    beforeAll(() => c.start(1));
    afterAll(async () => {
      await c.dispose();
      rmSync(certs, { recursive: true, force: true });
    });

    it('conductor and the worker verify the server with the CA; a task goes through the queue', async () => {
      expect(c.nats.url).toMatch(/^tls:\/\//);
      await runsOneTask(c, 'task-20260101-000000-tls01');
    });

    it('a worker that does not trust the CA is refused in one line (exit 1)', async () => {
      const r = await worker(['--nats', c.nats.url, '--root', join(c.dir, 'untrusting'), '--host', 'untrusting']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^Error: cannot connect to NATS at tls:\/\/localhost:\d+: .+\n$/);
    });
  });
});
