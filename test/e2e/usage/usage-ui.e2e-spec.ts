// The dashboard's usage panel (#18): task and tree usage, the hold state, Pause/Unpause — real
// conductor server, real headless Chromium (Debian chromium + playwright-core).
import { ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { FAKE_AGENT } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';
import { waitFor } from '../runner/helpers';
import { announcedPort } from '../../utils/ports';

const REPO = join(__dirname, '..', '..', '..');
const CONDUCTOR = join(REPO, 'bin', 'conductor');
const ARTIFACTS = join(REPO, 'test-artifacts', 'ui');
const PROJECT = 'usage-ui';
const TASK = 'task-20260101-000000-usage-root';
const CHILD = 'task-20260101-000000-usage-child';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

jest.setTimeout(180_000);

describe('usage panel in the dashboard (#18)', () => {
  let browser: Browser;
  let page: Page;
  let proc: ChildProcess;
  let output = '';
  let url = '';
  const dir = mkdtempSync(join(tmpdir(), 'usage-ui-'));
  const root = join(dir, 'runs');

  beforeAll(async () => {
    if (!existsSync('/usr/bin/chromium')) throw new Error('these tests drive /usr/bin/chromium: install it with `apt-get install -y chromium`');
    if (!existsSync(join(REPO, 'frontend', 'dist', 'index.html'))) execSync('npm run build', { cwd: join(REPO, 'frontend'), stdio: 'ignore' });
    mkdirSync(root);
    mkdirSync(join(dir, 'home'));
    writeFileSync(join(dir, 'config.yaml'), `agents:\n  fake:\n    type: command\n    command: ${FAKE_AGENT}\n`);
    seedRun(root, PROJECT, TASK, '20260101-0000000000-7-1', { agent: 'claude', usage: { input_tokens: 12000, output_tokens: 345, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.25 } });
    seedRun(root, PROJECT, CHILD, '20260101-0000000000-7-2', { agent: 'codex', parent_run_id: '20260101-0000000000-7-1', usage: { input_tokens: 1000, output_tokens: 55, cache_read_tokens: 0, cache_write_tokens: 0 } });
    proc = spawn(process.execPath, [CONDUCTOR, '--root', root, '--port', '0', '--host', '127.0.0.1', '--config', join(dir, 'config.yaml')], {
      cwd: dir,
      env: { ...process.env, HOME: join(dir, 'home'), CONDUCTOR_API_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    url = `http://127.0.0.1:${await waitFor('conductor to announce its port', () => {
      if (proc.exitCode !== null) throw new Error(`conductor exited:\n${output}`);
      return announcedPort(output);
    })}`;
    for (let ok = false; !ok; ) {
      if (proc.exitCode !== null) throw new Error(`conductor exited:\n${output}`);
      ok = await fetch(`${url}/api/v1/health`).then((r) => r.ok, () => false);
      if (!ok) await new Promise((r) => setTimeout(r, 200));
    }
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    if (proc && proc.exitCode === null) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 8000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the task and tree usage, and pauses/unpauses the task', async () => {
    try {
      await page.goto(`${url}/ui/?project=${PROJECT}&task=${TASK}`);
      const panel = page.getByRole('region', { name: 'Usage' });
      const own = panel.locator('tr', { hasText: 'This task' });
      await own.waitFor({ timeout: 30_000 });
      expect((await own.locator('td').allInnerTexts()).map((t) => t.trim())).toEqual(['This task', '1', '12,000', '345', '0', '12,345', '$0.25']);
      expect((await panel.locator('tr', { hasText: 'Task tree' }).locator('td').allInnerTexts()).map((t) => t.trim())).toEqual(['Task tree', '2', '13,000', '400', '0', '13,400', '$0.25']);

      await panel.getByRole('button', { name: 'Pause task' }).click();
      await waitFor(() => existsSync(join(root, PROJECT, TASK, 'PAUSED')), 20_000);
      await panel.getByText('Paused (this task): no new attempt until unpaused').waitFor({ timeout: 30_000 });
      await panel.locator('.status.status-held', { hasText: 'paused' }).waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'usage-panel-paused.png') });

      await panel.getByRole('button', { name: 'Unpause task' }).click();
      await waitFor(() => !existsSync(join(root, PROJECT, TASK, 'PAUSED')), 20_000);
      await panel.getByRole('button', { name: 'Pause task' }).waitFor({ timeout: 30_000 });
    } catch (err) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'failed-usage-panel.png') }).catch(() => undefined);
      writeFileSync(join(ARTIFACTS, 'failed-usage-panel-server.log'), output);
      throw err;
    }
  });
});
