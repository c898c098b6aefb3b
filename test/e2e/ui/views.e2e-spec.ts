// Issue #20: every view of the Ring UI dashboard in real Chromium: axe-core finds no serious or
// critical violation (light and dark theme), a keyboard-only walk through start → watch → stop →
// resume, deep links, and the summary cards agreeing with the tree. Screenshots go to test-artifacts/ui.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, type Conductor, eventually, launchBrowser, onFailure, PROJECT, runRow, shot, startConductor, stopConductor, textOf } from './helpers';

jest.setTimeout(240_000);

/** Presses Tab until the focused element's name (or `TAG:` + tag name) matches; fails after `max` presses. */
async function tabTo(page: Page, name: RegExp, max = 80): Promise<void> {
  const focused = () =>
    page.evaluate<string>(`(() => { const el = document.activeElement; return el && el.tagName === 'TEXTAREA' ? 'TAG:TEXTAREA' : ((el && (el.getAttribute('aria-label') || el.textContent)) || '').trim(); })()`);
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (name.test(await focused())) return;
  }
  throw new Error(`Tab never reached ${name} (last focus: ${await focused()})`);
}

const liveLog = (page: Page) => page.getByRole('log', { name: 'Live' });

describe('dashboard views in Chromium (issue #20)', () => {
  let browser: Browser;
  let server: Conductor | undefined;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    server = await startConductor();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await stopConductor(server);
  });

  it('walks start task → watch → stop → resume with the keyboard only, with no serious axe violation on the way', () => onFailure(page, server!, 'keyboard-walk', async () => {
    const c = server!;
    await page.goto(`${c.url}/ui/`);
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    // Start a task.
    await tabTo(page, /^New task$/);
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.waitFor();
    await eventually('the agent select to offer the configured agent', async () => (await textOf(dialog.getByRole('combobox', { name: 'Agent' }))) === 'uiagent');
    expect(await axeViolations(page)).toEqual([]);
    await eventually('focus in the project field', async () => (await page.evaluate<string>(`document.activeElement && document.activeElement.tagName`)) === 'INPUT');
    await page.keyboard.type(PROJECT);
    await tabTo(page, /^Agent$/, 3);
    await tabTo(page, /^TAG:TEXTAREA$/, 3);
    await page.keyboard.type('Keyboard walk');
    await shot(page, 'view-new-task-dialog');
    await tabTo(page, /^Start task$/, 10);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    const taskId = (await page.locator('.detail-title .task-id').innerText()).trim();
    expect(new URL(page.url()).searchParams.get('task')).toBe(taskId);

    // Watch: the live log streams the agent's rendered output.
    await liveLog(page).getByText(/hello from attempt 1 line \d/).first().waitFor({ timeout: 30_000 });
    await liveLog(page).getByText('⚙ Bash: cat TASK.md').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'view-run-live');

    // The task tree: arrow keys move, Enter selects the run (its URL names it).
    await tabTo(page, /^Task tree$/);
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await eventually('the run to be selected from the keyboard', async () => !!new URL(page.url()).searchParams.get('run'));
    const runId = new URL(page.url()).searchParams.get('run')!;
    expect(await runRow(page, runId).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('Home');
    await page.keyboard.press('Enter');
    await eventually('the task to be selected again', async () => new URL(page.url()).searchParams.get('run') === null);

    // Stop.
    await tabTo(page, /^Stop task$/);
    await page.keyboard.press('Enter');
    const resume = page.getByRole('button', { name: 'Resume task' });
    await resume.waitFor({ timeout: 45_000 });
    const taskRow = page.locator(`[role=treeitem][data-key="t:${taskId}"]`);
    await eventually('the run to show as stopped', async () => (await textOf(runRow(page, runId).locator('.status'))) === 'stopped', 30_000);
    await shot(page, 'view-stopped');

    // Resume: the next attempt finds FINISH and completes.
    writeFileSync(join(c.root, PROJECT, taskId, 'FINISH'), '');
    await tabTo(page, /^Resume task$/);
    await page.keyboard.press('Enter');
    await liveLog(page).getByText(/resumed in attempt \d+ and finished/).waitFor({ timeout: 45_000 });
    await eventually('the task to complete', async () => (await textOf(taskRow.locator('.status'))) === 'completed', 30_000);
    await eventually('the resumed run to complete', async () => (await page.locator('[role=treeitem] .status', { hasText: /^completed$/ }).count()) >= 2, 30_000);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'view-resumed');
  }));

  it('keeps the project row and the summary cards in agreement with the tree, and shows the agent name', () => onFailure(page, server!, 'overview', async () => {
    await page.goto(`${server!.url}/ui/?project=${PROJECT}`);
    await page.getByRole('treeitem').first().waitFor();
    const taskRows = await page.locator('[role=treeitem][data-key^="t:"]').count();
    await eventually('the tasks card to agree with the tree', async () => Number(await textOf(page.locator('.stat-tasks .stat-value'))) === taskRows);
    expect(await textOf(page.locator('.project.active .project-meta'))).toMatch(new RegExp(`^${taskRows} tasks? · `));
    await shot(page, 'view-overview');
    // Run rows name the configured agent (not only its type).
    await page.locator('[role=treeitem][data-key^="t:"] .tree-label').first().click();
    await page.locator('[role=treeitem] .agent', { hasText: 'uiagent' }).first().waitFor();
    expect(await textOf(page.locator('.detail-title .agent-name'))).toBe('uiagent (command)');
  }));

  it('opens a run from its URL, and Back returns to the task', () => onFailure(page, server!, 'deep-link', async () => {
    const c = server!;
    const runs = (await fetch(`${c.url}/api/projects/${PROJECT}/runs/flat`).then((r) => r.json())) as { runs?: { id: string; task_id: string }[] } | { id: string; task_id: string }[];
    const list = Array.isArray(runs) ? runs : (runs.runs ?? []);
    const first = list[0];
    // a sandboxed run (issue #35): its run folder's egress counts; the run header shows the sandbox and the bytes
    writeFileSync(join(c.root, PROJECT, first.task_id, 'runs', first.id, 'egress-bytes.json'), '{"api.anthropic.com:80": 1234}\n');
    // its egress log: the run's EGRESS_DENIED messages on the task bus (another run's denial is not shown)
    for (const [runId, host] of [[first.id, 'evil.test'], ['20260101-0000000000-other', 'other-run.test']]) {
      const res = await fetch(`${c.url}/api/v1/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: PROJECT, task_id: first.task_id, run_id: runId, type: 'EGRESS_DENIED', body: `egress denied: ${host}:443\nhost: ${host}\nport: 443\nmethod: CONNECT` }),
      });
      expect(res.status).toBe(201);
    }
    await page.goto(`${c.url}/ui/?project=${PROJECT}&task=${first.task_id}`);
    await page.locator('.detail-title .task-id', { hasText: first.task_id }).waitFor();
    await runRow(page, first.id).locator('.tree-label').click();
    await eventually('the run URL', async () => new URL(page.url()).searchParams.get('run') === first.id);
    await page.locator('.detail-title .run-id', { hasText: `run ${first.id}` }).waitFor();
    await page.goBack();
    await eventually('Back to drop the run', async () => new URL(page.url()).searchParams.get('run') === null);
    await page.goto(`${c.url}/ui/?project=${PROJECT}&task=${first.task_id}&run=${first.id}`);
    await page.locator('.detail-title .run-id', { hasText: `run ${first.id}` }).waitFor();
    expect(await textOf(page.locator('[data-testid=run-sandbox]'))).toBe('sandbox bwrap · api.anthropic.com:80 1234 B');
    await page.locator('[data-testid=egress-log] li', { hasText: 'CONNECT evil.test:443' }).waitFor();
    expect(await page.locator('[data-testid=egress-log] li').count()).toBe(1);
    await liveLog(page).getByText(/hello from attempt 1 line \d/).first().waitFor();
  }));

  it('switches to the dark theme (kept across reloads) with no serious axe violation', () => onFailure(page, server!, 'dark', async () => {
    await page.goto(`${server!.url}/ui/?project=${PROJECT}`);
    await page.getByRole('treeitem').first().waitFor();
    await page.getByText('Dark theme').click();
    await eventually('the dark theme', async () => (await page.evaluate<string>(`document.documentElement.dataset.theme`)) === 'dark');
    await page.reload();
    await page.getByRole('treeitem').first().waitFor();
    expect(await page.evaluate<string>(`document.documentElement.dataset.theme`)).toBe('dark');
    await page.getByRole('treeitem').first().locator('.tree-label').click();
    await liveLog(page).getByText(/resumed in attempt \d+ and finished|hello from attempt/).first().waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'view-dark');
  }));
});
