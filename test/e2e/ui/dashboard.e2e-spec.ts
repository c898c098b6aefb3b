// Drives the real dashboard (frontend/dist) in headless Chromium against a real `conductor`
// server with a temp runs root and a scripted command agent (test/fixtures/ui/ui-agent).
import { ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';

const REPO = join(__dirname, '..', '..', '..');
const CONDUCTOR = join(REPO, 'bin', 'conductor');
const AGENT = join(REPO, 'test', 'fixtures', 'ui', 'ui-agent');
const ARTIFACTS = join(REPO, 'test-artifacts', 'ui');
const PROJECT = 'ui-e2e';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

jest.setTimeout(180_000);

interface Conductor {
  url: string;
  port: number;
  dir: string;
  root: string;
  proc: ChildProcess;
  output: () => string;
  apiKey?: string;
}

/** Starts conductor on `port` (0: any free port, read back from its start-up line) and waits until it answers. */
async function startConductor(apiKey?: string, reuse?: { dir: string; port: number }): Promise<Conductor> {
  const dir = reuse?.dir ?? mkdtempSync(join(tmpdir(), 'ui-e2e-'));
  const root = join(dir, 'runs');
  const home = join(dir, 'home');
  const config = join(dir, 'config.yaml');
  if (!reuse) {
    mkdirSync(root);
    mkdirSync(home);
    writeFileSync(config, `agents:\n  uiagent:\n    type: command\n    command: ${AGENT}\n`);
  }
  const args = [CONDUCTOR, '--root', root, '--port', String(reuse?.port ?? 0), '--host', '127.0.0.1', '--config', config];
  if (apiKey) args.push('--api-key', apiKey);
  const proc = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, HOME: home, CONDUCTOR_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  try {
    const port = await waitFor('conductor to announce its port', () => {
      if (proc.exitCode !== null) throw new Error(`conductor exited with ${proc.exitCode}`);
      return announcedPort(output);
    });
    const url = `http://127.0.0.1:${port}`;
    await waitFor('conductor to answer', async () => (await fetch(`${url}/api/v1/health`)).ok);
    return { url, port, dir, root, proc, output: () => output, apiKey };
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`conductor did not start: ${(err as Error).message}\n${output}`);
  }
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
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  await waitFor(what, check, { timeoutMs, intervalMs: 200 });
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

    let taskId = '';
    let secondRunId = '';
    const failures: string[] = [];
    const live = () => page.getByRole('log', { name: 'Live' });
    const bus = () => page.getByRole('region', { name: 'Message bus' });
    const step = (name: string, fn: (c: Conductor) => Promise<void>) => () => onFailure(page, server!, name, () => fn(server!));

    it('creates a task from the dialog and streams its live log', step('create', async (c) => {
      page.on('response', (res) => {
        if (res.status() >= 400) failures.push(`${res.status()} ${res.request().method()} ${new URL(res.url()).pathname}`);
      });
      await page.goto(`${c.url}/ui/`);
      await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
      await shot(page, '01-empty');
      taskId = await createTask(page, 'Say hello to the dashboard');
      await live().getByText(/hello from attempt 1 line \d/).first().waitFor({ timeout: 30_000 });
      await live().getByText('⚙ Bash: cat TASK.md').waitFor();
      await live().getByText('▸ thinking (2 lines)').waitFor();
      await shot(page, '02-live-log');
    }));

    it('shows the restart chain when the Ralph loop restarts the agent', step('restart', async (c) => {
      writeFileSync(join(c.root, PROJECT, taskId, 'NEXT'), ''); // let the first attempt fail now
      const restart = page.getByRole('treeitem').filter({ hasText: 'restart #1' });
      await restart.waitFor({ timeout: 30_000 });
      await live().getByText(/attempt 2 still working, tick \d/).first().waitFor({ timeout: 30_000 });
      secondRunId = (await restart.locator('.run-id').innerText()).trim();
      await eventually('the restarted run to be shown', async () => (await textOf(page.locator('.detail-title .run-id'))) === `run ${secondRunId}`);
      expect(await restart.locator('[data-heartbeat]').getAttribute('data-heartbeat')).toBe('green');
    }));

    it('follows the log tail until the user scrolls up; "Jump to latest" brings it back', step('follow', async () => {
      const log = live();
      const distanceFromEnd = () => log.evaluate((el: { scrollHeight: number; scrollTop: number; clientHeight: number }) => el.scrollHeight - el.scrollTop - el.clientHeight);
      await log.getByText(/attempt 2 warm-up line 60/).waitFor();
      await eventually('the log to follow its tail', async () => (await distanceFromEnd()) < 20);
      await log.evaluate((el: { scrollTop: number }) => (el.scrollTop = 0));
      const jump = page.getByRole('button', { name: 'Jump to latest ↓' });
      await jump.waitFor();
      const tick = async () => Number((await textOf(log.getByText(/still working, tick \d+/).last())).match(/tick (\d+)/)?.[1] ?? 0);
      // New lines arrive while the user reads (the list grows: only the rows in view are rendered):
      // the view must not move.
      const height = () => log.evaluate((el: { scrollHeight: number }) => el.scrollHeight);
      const before = await height();
      await eventually('two more lines to arrive', async () => (await height()) >= before + 2 * 18); // LINE_HEIGHT of LogView
      expect(await log.evaluate((el: { scrollTop: number }) => el.scrollTop)).toBe(0);
      await jump.click();
      await eventually('the log to follow again', async () => (await distanceFromEnd()) < 20 && (await tick()) > 0);
    }));

    it('shows messages posted from the UI and by other clients in the project bus', step('project-bus', async (c) => {
      await bus().getByLabel('Message body').fill('hello from the browser');
      await bus().getByRole('button', { name: 'Post' }).click();
      await bus().getByRole('log').getByText('hello from the browser').waitFor();
      await fetch(`${c.url}/api/projects/${PROJECT}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'FACT', body: 'posted by another client' }),
      });
      await bus().getByRole('log').getByText('posted by another client').waitFor({ timeout: 30_000 });
      await shot(page, '03-message-bus');
    }));

    it('switches the bus to the task scope and posts there', step('task-bus', async (c) => {
      await bus().getByRole('button', { name: 'task', exact: true }).click();
      await bus().locator('.msg-type', { hasText: 'RUN_START' }).first().waitFor({ timeout: 30_000 });
      await bus().getByLabel('Message type', { exact: true }).selectOption('QUESTION');
      await bus().getByLabel('Message body').fill('a question for this task');
      await bus().getByRole('button', { name: 'Post' }).click();
      await bus().getByRole('log').getByText('a question for this task').waitFor();
      const taskBus = await fetch(`${c.url}/api/projects/${PROJECT}/tasks/${taskId}/messages`).then((r) => r.json() as Promise<{ messages: { type: string; body: string }[] }>);
      expect(taskBus.messages.filter((m) => m.type === 'QUESTION').map((m) => m.body)).toEqual(['a question for this task']);
      await bus().getByRole('button', { name: 'project', exact: true }).click();
      await bus().getByRole('log').getByText('posted by another client').waitFor();
      expect(await bus().getByRole('log').getByText('a question for this task').count()).toBe(0);
    }));

    it('stops the running run, then the task', step('stop', async () => {
      await page.getByRole('button', { name: 'Stop run' }).click();
      await eventually('the stopped run to end', async () => (await textOf(runRow(page, secondRunId).locator('.status'))) !== 'running', 45_000);
      // Issue #12: a stopped run is shown as stopped (not failed 143), and the cards agree with the tree.
      await eventually('the run to show as stopped', async () => (await textOf(runRow(page, secondRunId).locator('.status'))) === 'stopped', 15_000);
      const runningRows = async () => (await page.locator('[role=treeitem] .status', { hasText: /^running$/ }).count()).toString();
      await eventually('the running card to agree with the tree', async () => (await textOf(page.locator('.stat-running .stat-value'))) === (await runningRows()), 5_000);
      // The Ralph loop may start the next attempt: stop the whole task until nothing runs.
      const stopTask = page.getByRole('button', { name: 'Stop task' });
      const taskRow = page.locator(`[role=treeitem][data-key="t:${taskId}"]`);
      await eventually('the task to stop', async () => {
        if (await stopTask.isVisible()) await stopTask.click();
        return !(await stopTask.isVisible()) && (await textOf(taskRow.locator('.status'))) !== 'running';
      }, 45_000);
      await shot(page, '04-stopped');
    }));

    it('resumes the task, which then completes', step('resume', async (c) => {
      writeFileSync(join(c.root, PROJECT, taskId, 'FINISH'), '');
      await page.getByRole('button', { name: 'Resume task' }).click();
      await live().getByText(/resumed in attempt \d+ and finished/).waitFor({ timeout: 45_000 });
      const taskRow = page.locator(`[role=treeitem][data-key="t:${taskId}"]`);
      await eventually('the task to complete', async () => (await textOf(taskRow.locator('.status'))) === 'completed');
      await page.getByRole('tab', { name: 'TASK.md' }).click();
      await page.getByText('Say hello to the dashboard').waitFor();
      await page.getByRole('tab', { name: 'stdout' }).click();
      await live().getByText(/resumed in attempt \d+ and finished/).waitFor();
      await live().getByText('✔ all done').waitFor();
      await shot(page, '05-resumed');
      // Issue #12: resuming a stopped task made no failing call, and the favicon was served.
      expect(failures.filter((f) => /\/resume$|favicon/.test(f))).toEqual([]);
      await eventually('project stats to count runs', async () => Number(await textOf(page.locator('.stat-runs .stat-value'))) >= 3);
    }));

    it('is served at / as well as /ui/, and filters the tree by text and status', step('filter', async (c) => {
      // A second task that keeps running (its first attempt waits for NEXT), next to the completed one.
      const created = await fetch(`${c.url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: PROJECT, task_id: 'task-20260101-000000-still-running', agent_type: 'uiagent', prompt: 'keep going' }),
      });
      expect(created.status).toBe(201);
      await page.goto(`${c.url}/`);
      const row = (t: string) => page.locator(`[role=treeitem][data-key="t:${t}"]`);
      await row('task-20260101-000000-still-running').waitFor();
      await eventually('the new task to run', async () => (await textOf(row('task-20260101-000000-still-running').locator('.status'))) === 'running');
      await row(taskId).waitFor();

      await page.getByLabel('Filter tasks').fill('no-such-task');
      await page.getByText('No task matches the filter.').waitFor();
      expect(await page.getByRole('treeitem').count()).toBe(0);
      await page.getByLabel('Filter tasks').fill('still-running');
      await row(taskId).waitFor({ state: 'detached' });
      await row('task-20260101-000000-still-running').waitFor();
      await page.getByLabel('Filter tasks').fill('');

      await page.getByLabel('Status filter').selectOption('completed');
      await row('task-20260101-000000-still-running').waitFor({ state: 'detached' });
      await row(taskId).waitFor();
      await page.getByLabel('Status filter').selectOption('running');
      await row(taskId).waitFor({ state: 'detached' });
      await row('task-20260101-000000-still-running').waitFor();
      await page.getByLabel('Status filter').selectOption('all');
      await row(taskId).waitFor();
      // Let it finish: the next attempt finds FINISH and writes DONE.
      writeFileSync(join(c.root, PROJECT, 'task-20260101-000000-still-running', 'FINISH'), '');
      writeFileSync(join(c.root, PROJECT, 'task-20260101-000000-still-running', 'NEXT'), '');
    }));

    it('tells the user when the server goes away, and its streams reconnect when it is back', step('reconnect', async (c) => {
      const exited = new Promise((resolve) => c.proc.once('exit', resolve));
      c.proc.kill('SIGKILL');
      await exited;
      await page.getByText('Cannot reach the conductor server.', { exact: false }).waitFor({ timeout: 30_000 });
      const header = bus().locator('.bus-header');
      await header.getByText('reconnecting…').waitFor({ timeout: 30_000 });
      await shot(page, '08-server-down');

      // The same server (same root and port) comes back: the banner goes and the bus streams again.
      server = await startConductor(undefined, { dir: c.dir, port: c.port });
      await page.getByText('Cannot reach the conductor server.', { exact: false }).waitFor({ state: 'detached', timeout: 60_000 });
      await header.getByText('reconnecting…').waitFor({ state: 'detached', timeout: 60_000 });
      await fetch(`${server.url}/api/projects/${PROJECT}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'FACT', body: 'after the restart' }),
      });
      await bus().getByRole('log').getByText('after the restart').waitFor({ timeout: 30_000 });
      await shot(page, '09-server-back');
    }));
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
