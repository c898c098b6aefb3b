// Issue #29, a token by default: the real `bin/conductor` with a temp HOME generates a key on first
// start (0600 in the state folder), refuses requests without it, prints a dashboard link carrying it
// in the URL fragment (which Chromium follows into a working dashboard), lets `conductor` client
// subcommands find it without flags, and reuses it on the next start. Plus the bind rules of the
// opt-outs (--no-auth, --allowed-host, --allow-any-host).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { CONDUCTOR, runCli, serverEnv, startServer, writeConfig, writeFakeAgent, type RunningServer } from '../server/helpers';
import { launchBrowser } from '../ui/helpers';
import { rawRequest } from '../api/security-helpers';
import { RUN_AGENT } from '../../utils/cli';
import { seedRun } from '../../utils/run-fixtures';

const P = 'token-project';
const SEEDED_TASK = 'task-20260101-120000-seeded';

describe('a token by default (issue #29)', () => {
  let dir: string;
  let root: string;
  let config: string;
  let env: NodeJS.ProcessEnv;
  let server: RunningServer | undefined;
  const keyFile = () => join(dir, '.run-agent', 'api-key');
  const start = (args: string[] = [], extra: NodeJS.ProcessEnv = {}) =>
    startServer(CONDUCTOR, ['--host', '127.0.0.1', '--port', '0', '--root', root, '--config', config, '--watchdog-interval', '0', ...args], { ...env, ...extra }, dir);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'default-token-'));
    root = join(dir, 'runs');
    mkdirSync(join(root, P), { recursive: true });
    config = writeConfig(dir, writeFakeAgent(dir));
    // the default start: no key, no opt-out from the environment
    env = serverEnv(dir, { CONDUCTOR_NO_AUTH: '' });
  });

  afterEach(async () => {
    await server?.stop();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates a 0600 key, needs it, prints it only in the fragment of the dashboard link, and clients find it', async () => {
    server = await start();
    const st = statSync(keyFile());
    expect(st.mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, '.run-agent')).mode & 0o077).toBe(0);
    const key = readFileSync(keyFile(), 'utf8').trim();
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.stdout()).toContain(`Web UI available at http://127.0.0.1:${server.port}/ui/#token=${key}\n`);
    expect(server.stdout()).toContain(`API key: ${keyFile()} (generated now;`);
    expect(server.stdout()).not.toMatch(/[?&](token|api_key)=/);

    const without = await fetch(`${server.url}/api/v1/tasks?project_id=${P}`);
    expect(without.status).toBe(401);
    const withKey = await fetch(`${server.url}/api/v1/tasks?project_id=${P}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(withKey.status).toBe(200);

    // client subcommands: no --api-key, no CONDUCTOR_API_KEY; the saved key of this HOME
    const clientEnv = { ...env, CONDUCTOR_URL: server.url };
    const status = await runCli(CONDUCTOR, ['status'], clientEnv, { cwd: dir });
    expect(status).toMatchObject({ code: 0 });
    const list = await runCli(CONDUCTOR, ['task', 'list', '--project', P, '--json'], clientEnv, { cwd: dir });
    expect(list).toMatchObject({ code: 0 });
    // run-agent's commands that talk to the server find it too
    const viaRunAgent = await runCli(RUN_AGENT, ['server', 'task', 'list', '--project', P, '--json'], clientEnv, { cwd: dir });
    expect(viaRunAgent).toMatchObject({ code: 0 });
    // and a flag still wins over the saved key
    const wrong = await runCli(CONDUCTOR, ['status', '--api-key', 'not-the-key'], clientEnv, { cwd: dir });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('server returned 401');
  });

  it('reuses the saved key on the next start', async () => {
    server = await start();
    const key = readFileSync(keyFile(), 'utf8').trim();
    await server.stop();
    server = await start();
    expect(readFileSync(keyFile(), 'utf8').trim()).toBe(key);
    expect(server.stdout()).toContain(`#token=${key}\n`);
    expect(server.stdout()).toContain('(saved;');
  });

  it('keeps the key a user gave out of the output and writes no key file', async () => {
    server = await start(['--api-key', 'given-key-123']);
    expect(server.stdout()).toContain(`Web UI available at http://127.0.0.1:${server.port}/ui/\n`);
    expect(server.stdout()).not.toContain('given-key-123');
    expect(existsSync(keyFile())).toBe(false);
  });

  it('--no-auth: no key on loopback (warned); refused with exit 2 beyond loopback', async () => {
    server = await start(['--no-auth']);
    expect(server.stderr()).toContain('warning: authentication is off (--no-auth)');
    expect(existsSync(keyFile())).toBe(false);
    expect((await fetch(`${server.url}/api/v1/tasks?project_id=${P}`)).status).toBe(200);
    await server.stop();
    server = undefined;
    const refused = await runCli(CONDUCTOR, ['--host', '0.0.0.0', '--port', '0', '--root', root, '--allowed-host', 'box.example', '--no-auth'], env, { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^Error: refusing --no-auth on 0\.0\.0\.0: .*\n$/);
    expect(existsSync(keyFile())).toBe(false);
  });

  it('a non-loopback bind needs named hosts or --allow-any-host', async () => {
    const refused = await runCli(CONDUCTOR, ['--host', '0.0.0.0', '--port', '0', '--root', root], env, { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^Error: refusing to listen on 0\.0\.0\.0 without an allow-list of host names: .*--allowed-host.*--allow-any-host.*\n$/);
    expect(existsSync(keyFile())).toBe(false);

    server = await start(['--host', '0.0.0.0', '--allowed-host', 'box.example', '--allowed-host', 'other.example:9']);
    const status = async (host: string) => (await rawRequest(server!.url, 'GET', '/api/v1/health', { host })).status;
    expect(await status('box.example:1234')).toBe(200);
    expect(await status('other.example:9')).toBe(200);
    expect(await status('other.example:10')).toBe(403);
    expect(await status(`localhost:${server.port}`)).toBe(200);
    expect(await status(`evil.example:${server.port}`)).toBe(403);
    await server.stop();

    server = await start(['--host', '0.0.0.0', '--allow-any-host']);
    expect(server.stderr()).toContain('warning: no Host check (--allow-any-host)');
    expect((await rawRequest(server.url, 'GET', '/api/v1/health', { host: 'anything.example' })).status).toBe(200);
  });

  it('refuses a bad --allowed-host with exit 2', async () => {
    const res = await runCli(CONDUCTOR, ['--port', '0', '--root', root, '--allowed-host', 'http://x/'], env, { cwd: dir });
    expect(res).toMatchObject({ code: 2 });
    expect(res.stderr).toMatch(/^Error: invalid --allowed-host \/ CONDUCTOR_ALLOWED_HOSTS entry "http:\/\/x\/": .*\n$/);
  });

  describe('in Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(() => browser?.close());

    it('the printed dashboard link opens a dashboard that loads data with the key, and drops the fragment', async () => {
      seedRun(root, P, SEEDED_TASK, '20260101-1200000000-4242-1');
      server = await start();
      const link = /Web UI available at (\S+)\n/.exec(server.stdout())![1];
      const key = readFileSync(keyFile(), 'utf8').trim();
      const page = await browser.newPage();
      try {
        const projects = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/projects' && r.status() === 200);
        await page.goto(link);
        const res = await projects;
        expect(res.request().headers().authorization).toBe(`Bearer ${key}`);
        await page.waitForFunction('location.hash === ""');
        expect(page.url()).toBe(`http://127.0.0.1:${server.port}/ui/`);
        expect(await page.evaluate('sessionStorage.getItem("conductor.apiKey")')).toBe(key);
        await page.getByText(SEEDED_TASK).first().waitFor();
        expect(await page.getByText('This conductor server needs an API key').count()).toBe(0);
      } finally {
        await page.close();
      }
    });
  });
});
