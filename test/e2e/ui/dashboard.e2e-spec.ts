// Drives the real dashboard (frontend/dist) in headless Chromium against a real `conductor`
// server with a temp runs root and a scripted command agent (test/fixtures/ui/ui-agent).
import { ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

const REPO = join(__dirname, '..', '..', '..');
const CONDUCTOR = join(REPO, 'bin', 'conductor');
const AGENT = join(REPO, 'test', 'fixtures', 'ui', 'ui-agent');
const ARTIFACTS = join(REPO, 'test-artifacts', 'ui');
const PROJECT = 'ui-e2e';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

jest.setTimeout(180_000);

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

interface Conductor {
  url: string;
  root: string;
  proc: ChildProcess;
  output: () => string;
  apiKey?: string;
}

async function startConductor(apiKey?: string): Promise<Conductor> {
  const dir = mkdtempSync(join(tmpdir(), 'ui-e2e-'));
  const root = join(dir, 'runs');
  const home = join(dir, 'home');
  mkdirSync(root);
  mkdirSync(home);
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `agents:\n  uiagent:\n    type: command\n    command: ${AGENT}\n`);
  const port = await freePort();
  const args = [CONDUCTOR, '--root', root, '--port', String(port), '--host', '127.0.0.1', '--config', config];
  if (apiKey) args.push('--api-key', apiKey);
  const proc = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, HOME: home, CONDUCTOR_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (proc.exitCode !== null) break;
    try {
      const res = await fetch(`${url}/api/v1/health`);
      if (res.ok) return { url, root, proc, output: () => output, apiKey };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  proc.kill('SIGKILL');
  throw new Error(`conductor did not start:\n${output}`);
}

async function stopConductor(c: Conductor | undefined): Promise<void> {
  if (!c) return;
  const headers: Record<string, string> = c.apiKey ? { Authorization: `Bearer ${c.apiKey}` } : {};
  // Stop every task still running so no agent outlives the test.
  for (const task of existsSync(join(c.root, PROJECT)) ? readdirSync(join(c.root, PROJECT)) : []) {
    if (task.startsWith('task-')) await fetch(`${c.url}/api/v1/tasks/${task}?project_id=${PROJECT}`, { method: 'DELETE', headers }).catch(() => undefined);
  }
  const exited = c.proc.exitCode !== null || c.proc.signalCode !== null ? Promise.resolve() : new Promise((resolve) => c.proc.once('exit', resolve));
  c.proc.kill('SIGTERM');
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(timer);
  rmSync(join(c.root, '..'), { recursive: true, force: true });
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

async function createTask(page: Page, prompt: string): Promise<string> {
  await page.getByRole('button', { name: 'New task' }).click();
  const dialog = page.getByRole('dialog', { name: 'New task' });
  await dialog.getByLabel('Project').fill(PROJECT);
  // Issue #12: the agent is chosen from the server's configured agents.
  const agent = dialog.locator('select[aria-label="Agent"]');
  await agent.waitFor();
  expect(await agent.locator('option').allInnerTexts()).toEqual(['uiagent']);
  await agent.selectOption('uiagent');
  await dialog.getByLabel('Prompt').fill(prompt);
  await dialog.getByRole('button', { name: 'Start task' }).click();
  await dialog.waitFor({ state: 'detached' });
  const taskId = await page.locator('.detail-title .task-id').innerText();
  expect(taskId).toMatch(/^task-\d{8}-\d{6}-[a-z0-9-]+$/);
  return taskId;
}

/** Polls `check` until it holds; fails with `what` after the timeout. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function textOf(loc: Locator): Promise<string> {
  return (await loc.first().innerText()).trim();
}

/** Saves a screenshot (and the server log) when the step fails, to see what the user saw. */
async function onFailure<T>(page: Page, c: Conductor, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await shot(page, `failed-${name}`).catch(() => undefined);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, `failed-${name}-server.log`), c.output());
    throw err;
  }
}

function runRow(page: Page, runId: string) {
  return page.locator(`[role=treeitem][data-key="r:${runId}"]`);
}

describe('dashboard in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync('/usr/bin/chromium')) throw new Error('these tests drive /usr/bin/chromium: install it with `apt-get install -y chromium`');
    if (!existsSync(join(REPO, 'frontend', 'dist', 'index.html'))) execSync('npm run build', { cwd: join(REPO, 'frontend'), stdio: 'ignore' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('without an API key', () => {
    let server: Conductor | undefined;
    let page: Page;
    beforeAll(async () => {
      server = await startConductor();
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    });
    afterAll(async () => {
      await page?.close();
      await stopConductor(server);
    });

    it('creates a task, streams its log, shows the restart chain, posts a message, stops, and resumes', () => onFailure(page, server!, 'main-flow', async () => {
      const c = server!;
      const failures: string[] = [];
      page.on('response', (res) => {
        if (res.status() >= 400) failures.push(`${res.status()} ${res.request().method()} ${new URL(res.url()).pathname}`);
      });
      await page.goto(`${c.url}/ui/`);
      await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
      await shot(page, '01-empty');

      const taskId = await createTask(page, 'Say hello to the dashboard');
      const live = page.getByRole('log', { name: 'Live' });
      await live.getByText(/hello from attempt 1 line \d/).first().waitFor({ timeout: 30_000 });
      await live.getByText('⚙ Bash: cat TASK.md').waitFor();
      await live.getByText('▸ thinking (2 lines)').waitFor();
      await shot(page, '02-live-log');
      writeFileSync(join(c.root, PROJECT, taskId, 'NEXT'), ''); // let the first attempt fail now

      // The first attempt exits 1, the Ralph loop restarts it with previous_run_id set.
      const restart = page.getByRole('treeitem').filter({ hasText: 'restart #1' });
      await restart.waitFor({ timeout: 30_000 });
      await live.getByText(/attempt 2 still working, tick \d/).first().waitFor({ timeout: 30_000 });
      const secondRunId = (await restart.locator('.run-id').innerText()).trim();
      await eventually('the restarted run to be shown', async () => (await textOf(page.locator('.detail-title .run-id'))) === `run ${secondRunId}`);
      expect(await restart.locator('[data-heartbeat]').getAttribute('data-heartbeat')).toBe('green');

      // The log follows new output until the user scrolls up; "Jump to latest" brings it back.
      const distanceFromEnd = () => live.evaluate((el: { scrollHeight: number; scrollTop: number; clientHeight: number }) => el.scrollHeight - el.scrollTop - el.clientHeight);
      await live.getByText(/attempt 2 warm-up line 60/).waitFor();
      await eventually('the log to follow its tail', async () => (await distanceFromEnd()) < 20);
      await live.evaluate((el: { scrollTop: number }) => (el.scrollTop = 0));
      const jump = page.getByRole('button', { name: 'Jump to latest ↓' });
      await jump.waitFor();
      const tick = async () => Number((await textOf(live.getByText(/still working, tick \d+/).last())).match(/tick (\d+)/)?.[1] ?? 0);
      expect(await live.evaluate((el: { scrollTop: number }) => el.scrollTop)).toBe(0);
      await page.waitForTimeout(700); // two more ticks arrive while the user reads
      expect(await live.evaluate((el: { scrollTop: number }) => el.scrollTop)).toBe(0);
      await jump.click();
      await eventually('the log to follow again', async () => (await distanceFromEnd()) < 20 && (await tick()) > 0);

      // A message posted from the UI, and one posted by someone else, both arrive in the bus panel.
      const bus = page.getByRole('region', { name: 'Message bus' });
      await bus.getByLabel('Message body').fill('hello from the browser');
      await bus.getByRole('button', { name: 'Post' }).click();
      await bus.getByRole('log').getByText('hello from the browser').waitFor();
      await fetch(`${c.url}/api/projects/${PROJECT}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'FACT', body: 'posted by another client' }),
      });
      await bus.getByRole('log').getByText('posted by another client').waitFor({ timeout: 15_000 });
      await shot(page, '03-message-bus');

      // Task scope: the task bus (runner's RUN_START/RUN_STOP) and a post that lands there.
      await bus.getByRole('button', { name: 'task', exact: true }).click();
      await bus.locator('.msg-type', { hasText: 'RUN_START' }).first().waitFor({ timeout: 15_000 });
      await bus.getByLabel('Message type', { exact: true }).selectOption('QUESTION');
      await bus.getByLabel('Message body').fill('a question for this task');
      await bus.getByRole('button', { name: 'Post' }).click();
      await bus.getByRole('log').getByText('a question for this task').waitFor();
      const taskBus = await fetch(`${c.url}/api/projects/${PROJECT}/tasks/${taskId}/messages`).then((r) => r.json() as Promise<{ messages: { type: string; body: string }[] }>);
      expect(taskBus.messages.some((m) => m.type === 'QUESTION' && m.body === 'a question for this task')).toBe(true);
      await bus.getByRole('button', { name: 'project', exact: true }).click();
      await bus.getByRole('log').getByText('posted by another client').waitFor();

      // Stop the running run.
      await page.getByRole('button', { name: 'Stop run' }).click();
      await eventually('the stopped run to end', async () => (await textOf(runRow(page, secondRunId).locator('.status'))) !== 'running', 45_000);
      // Issue #12: a stopped run is shown as stopped (not failed 143), and the cards agree with the tree.
      await eventually('the run to show as stopped', async () => (await textOf(runRow(page, secondRunId).locator('.status'))) === 'stopped', 15_000);
      const runningRows = async () => (await page.locator('[role=treeitem] .status', { hasText: /^running$/ }).count()).toString();
      await eventually('the running card to agree with the tree', async () => (await textOf(page.locator('.stat-running .stat-value'))) === (await runningRows()), 5_000);

      // If the loop went on, stop the whole task.
      const stopTask = page.getByRole('button', { name: 'Stop task' });
      await page.waitForTimeout(2500);
      if (await stopTask.isVisible()) {
        await stopTask.click();
        await eventually('the task to stop', async () => !(await stopTask.isVisible()), 45_000);
      }
      await shot(page, '04-stopped');

      // Resume: the next attempt finds FINISH, writes DONE and completes.
      writeFileSync(join(c.root, PROJECT, taskId, 'FINISH'), '');
      await page.getByRole('button', { name: 'Resume task' }).click();
      await live.getByText(/resumed in attempt \d+ and finished/).waitFor({ timeout: 45_000 });
      const taskRow = page.locator(`[role=treeitem][data-key="t:${taskId}"]`);
      await eventually('the task to complete', async () => (await textOf(taskRow.locator('.status'))) === 'completed', 30_000);
      await page.getByRole('tab', { name: 'TASK.md' }).click();
      await page.getByText('Say hello to the dashboard').waitFor();
      await page.getByRole('tab', { name: 'stdout' }).click();
      await live.getByText(/resumed in attempt \d+ and finished/).waitFor();
      await live.getByText('✔ all done').waitFor();
      await shot(page, '05-resumed');
      // Issue #12: resuming a stopped task made no failing call, and the favicon was served.
      expect(failures.filter((f) => /\/resume$|favicon/.test(f))).toEqual([]);
      // Project stats reflect the runs.
      await eventually('project stats to count runs', async () => Number(await textOf(page.locator('.stat-runs .stat-value'))) >= 3);
    }));

    it('is served at / as well as /ui/, and filters the tree by text and status', async () => {
      await page.goto(`${server!.url}/`);
      await page.getByRole('treeitem').first().waitFor();
      await page.getByLabel('Filter tasks').fill('no-such-task');
      await page.getByText('No task matches the filter.').waitFor();
      await page.getByLabel('Filter tasks').fill('');
      await page.getByLabel('Status filter').selectOption('completed');
      await page.getByRole('treeitem').first().waitFor();
      await page.getByLabel('Status filter').selectOption('all');
    });

    it('tells the user when the server goes away and streams reconnect', async () => {
      const c = server!;
      const exited = new Promise((resolve) => c.proc.once('exit', resolve));
      c.proc.kill('SIGKILL');
      await exited;
      await page.getByText('Cannot reach the conductor server.', { exact: false }).waitFor({ timeout: 20_000 });
      const bus = page.getByRole('region', { name: 'Message bus' });
      await bus.locator('.bus-header').getByText('reconnecting…').waitFor({ timeout: 20_000 });
      await shot(page, '08-server-down');
    });
  });

  describe('with an API key', () => {
    let server: Conductor | undefined;
    let page: Page;
    beforeAll(async () => {
      server = await startConductor('s3cret-key');
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    });
    afterAll(async () => {
      await page?.close();
      await stopConductor(server);
    });

    it('asks for the key, then the same flow works with it', () => onFailure(page, server!, 'api-key', async () => {
      const c = server!;
      await page.goto(`${c.url}/ui/`);
      const prompt = page.getByRole('dialog', { name: 'API key required' });
      await prompt.waitFor();
      await shot(page, '06-api-key-prompt');
      await prompt.getByLabel('API key').fill('wrong-key');
      await prompt.getByRole('button', { name: 'Use key' }).click();
      await prompt.getByText('The server rejected that key.', { exact: false }).waitFor();
      await prompt.getByLabel('API key').fill('s3cret-key');
      await prompt.getByRole('button', { name: 'Use key' }).click();
      await page.getByRole('heading', { name: 'No projects yet' }).waitFor();

      const taskId = await createTask(page, 'Keyed hello');
      const live = page.getByRole('log', { name: 'Live' });
      await live.getByText(/hello from attempt 1 line \d/).first().waitFor({ timeout: 30_000 });
      writeFileSync(join(c.root, PROJECT, taskId, 'NEXT'), '');
      const bus = page.getByRole('region', { name: 'Message bus' });
      await bus.getByLabel('Message body').fill('keyed message');
      await bus.getByRole('button', { name: 'Post' }).click();
      await bus.getByRole('log').getByText('keyed message').waitFor();
      await fetch(`${c.url}/api/projects/${PROJECT}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer s3cret-key' },
        body: JSON.stringify({ type: 'FACT', body: 'streamed with the key' }),
      });
      await bus.getByRole('log').getByText('streamed with the key').waitFor({ timeout: 15_000 });
      expect(await page.evaluate('sessionStorage.getItem("conductor.apiKey")')).toBe('s3cret-key');
      await shot(page, '07-with-api-key');
    }));
  });
});
