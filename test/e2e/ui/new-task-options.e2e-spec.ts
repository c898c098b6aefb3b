// Issue #30.11 in real Chromium: the New task dialog preselects the configured default agent (not the
// alphabetically first), sends the working repository, worktree and budget fields (checked on the
// created task through the API and its files), and the runs list has no axe violation (the first
// run's expand control has an accessible name).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { makeRepo } from '../../utils/git-repo';
import { axeViolations, type Conductor, eventually, launchBrowser, onFailure, PROJECT, REPO, shot, startConductor, stopConductor, textOf } from './helpers';

jest.setTimeout(240_000);

const AGENT = join(REPO, 'test', 'fixtures', 'ui', 'ui-agent');

describe('New task dialog: default agent, repository, worktree and budget (#30.11)', () => {
  let browser: Browser;
  let server: Conductor | undefined;
  let page: Page;
  let repoDir: string;

  beforeAll(async () => {
    repoDir = mkdtempSync(join(tmpdir(), 'ui-e2e-repo-'));
    makeRepo(join(repoDir, 'app'));
    browser = await launchBrowser();
    // `alpha` sorts first; the configured default is `uiagent`
    server = await startConductor({ agents: { alpha: AGENT, uiagent: AGENT }, extraConfig: 'defaults:\n  agent: uiagent\n' });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await stopConductor(server);
    rmSync(repoDir, { recursive: true, force: true });
  });

  const api = async (path: string): Promise<any> => {
    const res = await fetch(`${server!.url}${path}`);
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return res.json();
  };

  it('preselects the default agent and creates a worktree task with a budget', () => onFailure(page, server!, 'new-task-options', async () => {
    const repo = join(repoDir, 'app');
    await page.goto(`${server!.url}/ui/`);
    await page.getByRole('button', { name: 'New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.waitFor();
    await eventually('the agent select to show the configured default', async () => (await textOf(dialog.getByRole('combobox', { name: 'Agent' }))) === 'uiagent');
    expect(await axeViolations(page)).toEqual([]);

    const taskId = 'task-20260101-000000-options';
    await dialog.getByLabel('Project').fill(PROJECT);
    await dialog.getByLabel('Prompt').fill('Work in the repository');
    await dialog.getByLabel('Task id').fill(taskId);
    await dialog.getByText('Repository, worktree and budget').click();
    await dialog.getByLabel('Working repository').fill(repo);
    await dialog.getByLabel('Run in a git worktree of the repository').check();
    await dialog.getByLabel('Base branch or commit').fill('main');
    await dialog.getByLabel('Paths').fill('src, docs');
    await dialog.getByLabel('Max tokens').fill('50000');
    await dialog.getByLabel('Max cost (USD)').fill('2.5');
    await dialog.getByLabel('Max wall time').fill('2s');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Start task' }).click();
    await dialog.waitFor({ state: 'detached' });

    // The task reached the API with those fields: its worktree of the repository on its branch …
    let task: { worktree?: { path: string } } = {};
    await eventually('the task to report its worktree', async () => !!(task = await api(`/api/v1/tasks/${taskId}?project_id=${PROJECT}`)).worktree);
    expect(task.worktree).toMatchObject({ branch: `conductor/${taskId}`, base_branch: 'main', paths: ['src', 'docs'] });
    expect(task.worktree!.path.startsWith(repo)).toBe(true);
    // … the agent runs there …
    const runs = await api(`/api/projects/${PROJECT}/tasks/${taskId}/runs`);
    const run = await api(`/api/projects/${PROJECT}/tasks/${taskId}/runs/${runs.items[0].id}`);
    expect(run.cwd).toBe(task.worktree!.path);
    expect(run.agent_name).toBe('uiagent');
    // … and the budget holds: the 2 s wall time stops the tree, the other limits are stored.
    await eventually('the wall-time budget to stop the task', async () => {
      const list = await api(`/api/projects/${PROJECT}/tasks`);
      return /wall time .* > max 2s/.test(list.items.find((t: { id: string }) => t.id === taskId)?.budget_exceeded ?? '');
    }, 30_000);
    const settings = readFileSync(join(server!.root, PROJECT, taskId, 'TASK-SETTINGS.yaml'), 'utf8');
    expect(settings).toMatch(/max_tokens: 50000/);
    expect(settings).toMatch(/max_cost_usd: 2.5/);
  }));

  it('refuses a budget that is not a number in the dialog and creates nothing', () => onFailure(page, server!, 'new-task-bad-budget', async () => {
    await page.goto(`${server!.url}/ui/?project=${PROJECT}`);
    await page.getByRole('button', { name: 'New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.getByLabel('Project').fill(PROJECT);
    await dialog.getByLabel('Prompt').fill('Never starts');
    await dialog.getByLabel('Task id').fill('task-20260101-000000-never');
    await dialog.getByText('Repository, worktree and budget').click();
    await dialog.getByLabel('Max tokens').fill('lots');
    await dialog.getByRole('button', { name: 'Start task' }).click();
    expect(await textOf(dialog.getByRole('alert'))).toBe('Max tokens must be a positive whole number.');
    expect(existsSync(join(server!.root, PROJECT, 'task-20260101-000000-never'))).toBe(false);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  }));

  it('sends completion criteria; the run details show a rejected DONE and the passing check (#33)', () => onFailure(page, server!, 'new-task-criteria', async () => {
    const taskId = 'task-20260101-000000-criteria';
    // passes once the agent has run three times: at least one DONE before that is rejected
    const criterion = '[ "$(cat "$JRUN_TASK_FOLDER/ui-agent-attempts")" -ge 3 ]';
    await page.goto(`${server!.url}/ui/?project=${PROJECT}`);
    await page.getByRole('button', { name: 'New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.getByLabel('Project').fill(PROJECT);
    await dialog.getByLabel('Prompt').fill('Claim done early');
    await dialog.getByLabel('Task id').fill(taskId);
    await dialog.getByText('Repository, worktree and budget').click();
    await dialog.getByLabel('Completion criteria').fill(criterion);
    await dialog.getByLabel('Criteria timeout').fill('30s');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Start task' }).click();
    await dialog.waitFor({ state: 'detached' });
    const taskDir = join(server!.root, PROJECT, taskId);
    // the agent writes DONE on every attempt once FINISH exists (NEXT ends a first attempt that missed it)
    writeFileSync(join(taskDir, 'FINISH'), '');
    writeFileSync(join(taskDir, 'NEXT'), '');
    expect(readFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'utf8')).toBe(`done_criteria:\n    - command: ${JSON.stringify(criterion)}\ndone_criteria_timeout: 30s\n`);
    let detail: any;
    await eventually('the task to be done with its criteria passed', async () => (detail = await api(`/api/projects/${PROJECT}/tasks/${taskId}`)).criteria?.state === 'passed' && detail.done, 60_000);
    const rejected = detail.runs.find((r: { criteria?: { passed: boolean } }) => r.criteria && !r.criteria.passed);
    expect(rejected).toBeDefined();
    await page.goto(`${server!.url}/ui/?project=${PROJECT}&task=${taskId}&run=${rejected.id}`);
    await page.getByRole('tab', { name: 'run-info' }).click();
    const region = page.getByRole('region', { name: 'Completion criteria' });
    await region.waitFor();
    expect(await textOf(region.locator('h4'))).toBe('Completion criteria: failed');
    expect(await textOf(region.locator('li'))).toContain(`${criterion} — exit 1`);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'run-criteria-failed');
  }));

  it('the runs list has no axe violation: the first run\'s expand control has a name that matches it', () => onFailure(page, server!, 'runs-list-axe', async () => {
    // a task whose first run is restarted: the tree shows the first run with an expand control
    const taskId = 'task-20260101-000000-restarted';
    const res = await fetch(`${server!.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: PROJECT, task_id: taskId, agent_type: 'uiagent', prompt: 'restart once' }),
    });
    expect(res.status).toBe(201);
    await eventually('the first attempt to run', async () => (await api(`/api/projects/${PROJECT}/tasks/${taskId}/runs`)).items.length === 1);
    writeFileSync(join(server!.root, PROJECT, taskId, 'NEXT'), '');
    await eventually('the restart', async () => (await api(`/api/projects/${PROJECT}/tasks/${taskId}/runs`)).items.length === 2, 30_000);
    const [second, first] = (await api(`/api/projects/${PROJECT}/tasks/${taskId}/runs`)).items.map((r: { id: string }) => r.id);
    await page.goto(`${server!.url}/ui/?project=${PROJECT}&task=${taskId}&run=${second}`);
    const expander = page.locator(`[role=treeitem][data-key="r:${first}"] button.twisty`);
    await expander.waitFor();
    expect(await page.getByRole('button', { name: `Collapse ${first}`, exact: true }).count()).toBe(1);
    // the restart row selected (its relation label on the selection colour), then the first run
    expect(await axeViolations(page)).toEqual([]);
    expect(await namingFindings(page)).toEqual([]);
    await shot(page, 'runs-list-restart-selected');
    await page.locator(`[role=treeitem][data-key="r:${first}"] .tree-label`).click();
    await page.getByText(/thinking \(2 lines\)/).first().waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await namingFindings(page)).toEqual([]);
  }));
});

/**
 * axe's naming rules on the run tree, violations and "needs review" results alike: a control
 * without a name, or whose visible text is not part of its name (WCAG 2.5.3).
 */
async function namingFindings(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const w = globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<Record<'violations' | 'incomplete', { id: string; nodes: { html: string }[] }[]>> }; document: { querySelector: (s: string) => unknown } };
    const r = await w.axe.run(w.document.querySelector('[role=tree]'), { runOnly: ['button-name', 'label-content-name-mismatch', 'aria-command-name', 'aria-treeitem-name'], resultTypes: ['violations', 'incomplete'] });
    return [...r.violations, ...r.incomplete].flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.html}`));
  });
}
