// The worktree diff view and merge button of the real dashboard (frontend/dist) in headless
// Chromium, against a real `conductor` server whose tasks run in worktrees of a real git repository.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { gitSync } from '../../utils/git-repo';
import { P, T1, T2, WorktreeSandbox } from '../worktree/helpers';
import { type Conductor, eventually, launchBrowser, launchConductor, onFailure, shot, stopConductor } from './helpers';

jest.setTimeout(180_000);

describe('worktree diff view and merge button in Chromium', () => {
  let browser: Browser;
  let sb: WorktreeSandbox;
  let server: Conductor | undefined;
  let page: Page;

  beforeAll(async () => {
    sb = new WorktreeSandbox();
    server = await launchConductor({ root: sb.root, config: sb.config, dir: sb.dir, env: sb.env({ CONDUCTOR_API_KEY: '', CONDUCTOR_NO_AUTH: '1' }), ownsDir: false });
    const { url } = server;
    for (const [task, text] of [[T1, 'ALPHA'], [T2, 'BETA']]) {
      const res = await fetch(`${url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: P, task_id: task, agent_type: 'writer', prompt: 'write', project_root: sb.repo, isolation: 'worktree', config: { WRITE_TEXT: text } }),
      });
      expect(res.status).toBe(201);
    }
    for (const task of [T1, T2]) {
      await eventually(`${task} to finish`, async () => ((await (await fetch(`${url}/api/projects/${P}/tasks/${task}`)).json()) as { status: string }).status === 'all_finished', 30_000);
    }
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stopConductor(server);
    sb?.cleanup();
  });

  const openDiff = async (task: string) => {
    await page.locator(`[role=treeitem][data-key="t:${task}"]`).click();
    await page.getByRole('tab', { name: 'diff' }).click();
  };

  it('shows the file list and hunks; merges the first task and reports the second one conflicting', () => onFailure(page, server!, 'worktree-diff', async () => {
    await page.goto(`${server!.url}/ui/`);
    await openDiff(T1);
    const files = page.getByRole('list', { name: 'Changed files' });
    await files.getByText('shared.txt').waitFor();
    const hunks = page.getByLabel('Changes in shared.txt');
    await hunks.locator('.line-del', { hasText: 'line two' }).waitFor();
    expect(await hunks.locator('.line-add').allInnerTexts()).toEqual(['+ALPHA']);
    expect(await page.locator('.detail-title [data-testid=worktree-badge]').innerText()).toBe(`conductor/${T1} · unmerged`);

    await page.getByRole('button', { name: 'Merge' }).click();
    await page.getByRole('status').filter({ hasText: `Merged conductor/${T1}` }).waitFor();
    await page.getByTestId('merge-status').filter({ hasText: 'merged' }).waitFor();
    expect(readFileSync(join(sb.repo, 'shared.txt'), 'utf8')).toContain('ALPHA');
    const main = gitSync(sb.repo, 'rev-parse', 'main');

    await openDiff(T2);
    await page.getByLabel('Changes in shared.txt').locator('.line-add', { hasText: '+BETA' }).waitFor();
    await page.getByRole('button', { name: 'Merge' }).click();
    await page.getByRole('alert').filter({ hasText: 'conflicts' }).first().waitFor();
    await page.getByTestId('merge-status').filter({ hasText: 'merge conflict: shared.txt' }).waitFor();
    await eventually('the header badge to show the conflict', async () =>
      (await page.locator('.detail-title [data-testid=worktree-badge]').innerText()) === `conductor/${T2} · merge conflict`, 30_000);
    expect(gitSync(sb.repo, 'rev-parse', 'main')).toBe(main);
    await shot(page, 'view-worktree-diff');
  }));
});
