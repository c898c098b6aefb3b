// The npm package as a user gets it: `npm pack`, install the tarball into an empty prefix
// (production dependencies only, fs-ext built natively), then run both executables. These are
// also the build and start commands of the Dockerfile's runtime stage (no Docker engine here).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, cleanEnv, REPO, spawnCaptured, waitForOk } from './packaging-helpers';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';

const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

describe('npm package (npm pack + install of the tarball)', () => {
  let dir: string;
  let prefix: string;
  let runs: string;
  let env: NodeJS.ProcessEnv;
  const bin = (name: string) => join(prefix, 'node_modules', '.bin', name);
  const run = (name: string, args: string[], input?: string) =>
    execFileSync(bin(name), args, { cwd: dir, env, input, encoding: 'utf8', timeout: 60_000 });

  beforeAll(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'pack-e2e-'));
    prefix = join(dir, 'prefix');
    runs = join(dir, 'runs');
    mkdirSync(prefix);
    mkdirSync(join(runs, 'demo'), { recursive: true });
    env = cleanEnv(join(dir, 'home'));
    execFileSync('npm', ['pack', '--pack-destination', dir, ...NPM_FLAGS], { cwd: REPO, env: { ...env, HOME: process.env.HOME }, stdio: 'pipe' });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error('npm pack wrote no tarball');
    // The user's npm cache (HOME) is reused so that the install stays fast and offline-friendly.
    execFileSync('npm', ['install', '--prefix', prefix, '--omit=dev', ...NPM_FLAGS, join(dir, tarball)], {
      cwd: dir,
      env: { ...env, HOME: process.env.HOME },
      stdio: 'pipe',
      timeout: 300_000,
    });
  }, 360_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const installed = () => join(prefix, 'node_modules', 'conductor-loop');

  it('contains the builds, the UI and the engines range, and no dev dependencies', () => {
    const pkg = JSON.parse(readFileSync(join(installed(), 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe('^22.13.0 || >=24');
    expect(readFileSync(join(installed(), 'frontend', 'dist', 'index.html'), 'utf8')).toContain('<html');
    expect(readdirSync(join(installed(), 'dist', 'apps'))).toEqual(expect.arrayContaining(['api', 'cli']));
    const modules = readdirSync(join(prefix, 'node_modules'));
    expect(modules).toContain('fs-ext');
    expect(modules).not.toContain('jest');
    expect(modules).not.toContain('typescript');
    // the OpenAPI generator's packages are dev-only: the server serves the checked-in document
    expect(readdirSync(join(prefix, 'node_modules', '@nestjs'))).not.toContain('swagger');
  });

  it('run-agent --version, bus post and bus read work against a temp root', () => {
    expect(run('run-agent', ['--version'])).toMatch(/^run-agent \S+\n/);
    const posted = run('run-agent', ['bus', 'post', '--root', runs, '--project', 'demo', '--type', 'FACT', '--body', 'hello from the package']);
    expect(posted).toMatch(/^msg_id: MSG-\d{8}-\d{6}-/);
    const read = run('run-agent', ['bus', 'read', '--root', runs, '--project', 'demo']);
    expect(read).toContain('(FACT) hello from the package');
  });

  it('conductor serves /api/v1/health, /api/openapi.json and the UI index.html, and the Dockerfile HEALTHCHECK passes against it', async () => {
    const server = spawnCaptured(bin('conductor'), ['--host', '127.0.0.1', '--port', '0', '--root', runs], { cwd: dir, env });
    try {
      const port = await waitFor('conductor to announce its port', () => {
        if (server.child.exitCode !== null) throw new Error(`conductor exited with ${server.child.exitCode}`);
        return announcedPort(server.output());
      });
      const health = await waitForOk(`http://127.0.0.1:${port}/api/v1/health`, server.child);
      expect(await health.json()).toEqual({ status: 'ok' });
      const index = await (await waitForOk(`http://127.0.0.1:${port}/`, server.child)).text();
      expect(index).toBe(readFileSync(join(installed(), 'frontend', 'dist', 'index.html'), 'utf8'));
      // no key configured: the server generated one in the user's state folder (0600), which clients read
      const key = readFileSync(join(dir, 'home', '.run-agent', 'api-key'), 'utf8').trim();
      expect((await fetch(`http://127.0.0.1:${port}/api/openapi.json`)).status).toBe(401);
      const openapi = await (await waitForOk(`http://127.0.0.1:${port}/api/openapi.json`, server.child, { authorization: `Bearer ${key}` })).text();
      expect(openapi).toBe(readFileSync(join(installed(), 'docs', 'openapi.json'), 'utf8'));

      // The image's health probe, run as written in the Dockerfile, with the port it reads from the env.
      const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
      const probe = /HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])/.exec(dockerfile);
      expect(probe).not.toBeNull();
      const [cmd, ...args] = JSON.parse(probe![1]) as string[];
      execFileSync(cmd === 'node' ? process.execPath : cmd, args, { env: { ...env, CONDUCTOR_PORT: String(port) }, timeout: 30_000 });
    } catch (err) {
      throw new Error(`${(err as Error).message}\nserver output:\n${server.output()}`);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
  }, 120_000);
});
