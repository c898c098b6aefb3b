// Drives the real dashboard (frontend/dist) in headless Chromium against a real `conductor`
// server with a temp runs root and a scripted command agent (test/fixtures/ui/ui-agent).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { isTaskLoopRunning } from '@app/runner';
import { type Conductor, createTask, eventually, launchBrowser, onFailure, pickOption, PROJECT, runRow, shot, startConductor, stopConductor, textOf } from './helpers';

jest.setTimeout(180_000);

describe('dashboard in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('without an API key', () => {
    let server: Conductor | undefined;
    let page: Page;
    let taskId = '';
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

      taskId = await createTask(page, 'Say hello to the dashboard');
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
      // Two more batches of output arrive while the user reads (the windowed list grows), and the view stays put.
      const height = () => live.evaluate((el: { scrollHeight: number }) => el.scrollHeight);
      for (let batch = 0; batch < 2; batch++) {
        const before = await height();
        await eventually('more output to arrive while the user reads', async () => (await height()) > before);
      }
      expect(await live.evaluate((el: { scrollTop: number }) => el.scrollTop)).toBe(0);
      await jump.click();
      await eventually('the log to follow again', async () => (await distanceFromEnd()) < 20 && (await tick()) > 0);

      // Issue #20: an earlier run of the restart chain shows its own output, not the latest one.
      const firstRunId = (await page.locator('[role=treeitem][data-key^="r:"]').first().locator('.run-id').innerText()).trim();
      expect(firstRunId).not.toBe(secondRunId);
      await runRow(page, firstRunId).locator('.tree-label').click();
      await eventually('the first run to be shown', async () => (await textOf(page.locator('.detail-title .run-id'))) === `run ${firstRunId}`);
      await live.getByText(/hello from attempt 1 line \d/).first().waitFor();
      expect(await live.getByText(/attempt 2/).count()).toBe(0);
      expect(new URL(page.url()).searchParams.get('run')).toBe(firstRunId);
      await shot(page, '02b-earlier-run');
      await runRow(page, secondRunId).locator('.tree-label').click();
      await live.getByText(/attempt 2 still working, tick \d/).first().waitFor();

      // Issue #20: one bus panel; with a task selected it shows the task bus (explicit scope) and
      // its one compose box posts there.
      const bus = page.getByRole('region', { name: 'Message bus' });
      expect(await page.getByRole('region', { name: 'Message bus' }).count()).toBe(1);
      expect(await page.getByLabel('Message body').count()).toBe(1);
      await bus.getByText(`task ${taskId}`, { exact: true }).waitFor();
      await bus.locator('.msg-type', { hasText: 'RUN_START' }).first().waitFor({ timeout: 15_000 });
      await pickOption(page, bus, 'Message type', 'QUESTION');
      await bus.getByLabel('Message body').fill('a question for this task');
      await bus.getByRole('button', { name: 'Post to task' }).click();
      await bus.getByRole('log').getByText('a question for this task').waitFor();
      const taskBus = await fetch(`${c.url}/api/projects/${PROJECT}/tasks/${taskId}/messages`).then((r) => r.json() as Promise<{ messages: { type: string; body: string }[] }>);
      expect(taskBus.messages.some((m) => m.type === 'QUESTION' && m.body === 'a question for this task')).toBe(true);

      // Project scope: a message posted from the UI, and one posted by someone else, both arrive.
      await bus.getByRole('button', { name: 'Project', exact: true }).click();
      await bus.getByText(`project ${PROJECT}`, { exact: true }).waitFor();
      await pickOption(page, bus, 'Message type', 'USER');
      await bus.getByLabel('Message body').fill('hello from the browser');
      await bus.getByRole('button', { name: 'Post to project' }).click();
      await bus.getByRole('log').getByText('hello from the browser').waitFor();
      const projectBus = await fetch(`${c.url}/api/projects/${PROJECT}/messages`).then((r) => r.json() as Promise<{ messages: { type: string; body: string }[] }>);
      expect(projectBus.messages.some((m) => m.type === 'USER' && m.body === 'hello from the browser')).toBe(true);
      await fetch(`${c.url}/api/projects/${PROJECT}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'FACT', body: `posted by another client, see ${c.root}/${PROJECT}/${taskId}/TASK.md` }),
      });
      // FACT paths are shown relative to the project.
      await bus.getByRole('log').getByText(`posted by another client, see ${taskId}/TASK.md`, { exact: true }).waitFor({ timeout: 15_000 });
      await shot(page, '03-message-bus');
      await bus.getByRole('button', { name: 'Task', exact: true }).click();
      await bus.getByRole('log').getByText('a question for this task').waitFor();

      // Stop the running run.
      await page.getByRole('button', { name: 'Stop run' }).click();
      await eventually('the stopped run to end', async () => (await textOf(runRow(page, secondRunId).locator('.status'))) !== 'running', 45_000);
      // Issue #12: a stopped run is shown as stopped (not failed 143), and the cards agree with the tree.
      await eventually('the run to show as stopped', async () => (await textOf(runRow(page, secondRunId).locator('.status'))) === 'stopped', 15_000);
      const runningRows = async () => (await page.locator('[role=treeitem] .status', { hasText: /^running$/ }).count()).toString();
      await eventually('the running card to agree with the tree', async () => (await textOf(page.locator('.stat-running .stat-value'))) === (await runningRows()));

      // A stopped run ends the Ralph loop (no restart): the task reads as stopped and offers Resume.
      await eventually('the Ralph loop to end', async () => !isTaskLoopRunning(join(c.root, PROJECT, taskId)), 45_000);
      await page.getByRole('button', { name: 'Resume task' }).waitFor({ timeout: 45_000 });
      expect(await page.getByRole('button', { name: 'Stop task' }).count()).toBe(0);
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

    it('is served at / as well as /ui/, and filters the tree by text and status', () => onFailure(page, server!, 'filter', async () => {
      const c = server!;
      // A second task that keeps running (its first attempt waits for NEXT), next to the completed one.
      const other = 'task-20260101-000000-still-running';
      const created = await fetch(`${c.url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: PROJECT, task_id: other, agent_type: 'uiagent', prompt: 'keep going' }),
      });
      expect(created.status).toBe(201);
      await page.goto(`${c.url}/`);
      const row = (t: string) => page.locator(`[role=treeitem][data-key="t:${t}"]`);
      await row(other).waitFor();
      await eventually('the new task to run', async () => (await textOf(row(other).locator('.status'))) === 'running', 30_000);
      await row(taskId).waitFor();

      await page.getByLabel('Filter tasks').fill('no-such-task');
      await page.getByText('No task matches the filter.').waitFor();
      expect(await page.getByRole('treeitem').count()).toBe(0);
      await page.getByLabel('Filter tasks').fill('still-running');
      await row(taskId).waitFor({ state: 'detached' });
      await row(other).waitFor();
      await page.getByLabel('Filter tasks').fill('');

      await pickOption(page, page, 'Status filter', 'completed');
      await row(other).waitFor({ state: 'detached' });
      await row(taskId).waitFor();
      await pickOption(page, page, 'Status filter', 'running');
      await row(taskId).waitFor({ state: 'detached' });
      await row(other).waitFor();
      await pickOption(page, page, 'Status filter', 'all statuses');
      await row(taskId).waitFor();
      // Let it finish: the next attempt finds FINISH and writes DONE.
      writeFileSync(join(c.root, PROJECT, other, 'FINISH'), '');
      writeFileSync(join(c.root, PROJECT, other, 'NEXT'), '');
    }));

    it('tells the user when the server goes away, and its streams reconnect when it is back', () => onFailure(page, server!, 'reconnect', async () => {
      const c = server!;
      const exited = new Promise((resolve) => c.proc.once('exit', resolve));
      c.proc.kill('SIGKILL');
      await exited;
      await page.getByText('Cannot reach the conductor server.', { exact: false }).waitFor({ timeout: 30_000 });
      const bus = page.getByRole('region', { name: 'Message bus' });
      const header = bus.locator('.bus-header');
      await header.getByText('reconnecting…').waitFor({ timeout: 30_000 });
      await shot(page, '08-server-down');

      // The same server (same root and port) comes back: the banner goes and the bus streams again.
      server = await startConductor({ reuse: { dir: c.dir, port: c.port } });
      await page.getByText('Cannot reach the conductor server.', { exact: false }).waitFor({ state: 'detached', timeout: 60_000 });
      await header.getByText('reconnecting…').waitFor({ state: 'detached', timeout: 60_000 });
      await fetch(`${server.url}/api/projects/${PROJECT}/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'FACT', body: 'after the restart' }),
      });
      await bus.getByRole('log').getByText('after the restart').waitFor({ timeout: 30_000 });
      await shot(page, '09-server-back');
    }));
  });

  describe('with an API key', () => {
    let server: Conductor | undefined;
    let page: Page;
    beforeAll(async () => {
      server = await startConductor({ apiKey: 's3cret-key' });
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
      await bus.getByRole('button', { name: 'Post to task' }).click();
      await bus.getByRole('log').getByText('keyed message').waitFor();
      await bus.getByRole('button', { name: 'Project', exact: true }).click();
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
