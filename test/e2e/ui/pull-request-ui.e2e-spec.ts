// The pull-request controls of the real dashboard (frontend/dist) in headless Chromium, against a
// real `conductor` with a GitHub token: a worktree task's "Open pull request" pushes its branch to a
// real bare repository (its remote is named by its GitHub URL, rewritten to the bare one by git's
// url.<base>.insteadOf) and opens a pull request on GitHub's published API (test/utils/github-double.ts).
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { gitSync } from '../../utils/git-repo';
import { GithubDouble, githubDouble } from '../../utils/github-double';
import { P, T1, WorktreeSandbox } from '../worktree/helpers';
import { type Conductor, eventually, launchBrowser, launchConductor, onFailure, shot, stopConductor } from './helpers';

jest.setTimeout(180_000);

describe('pull request controls in Chromium', () => {
  let browser: Browser;
  let sb: WorktreeSandbox;
  let gh: GithubDouble;
  let server: Conductor | undefined;
  let page: Page;
  let remote: string;

  beforeAll(async () => {
    gh = await githubDouble();
    sb = new WorktreeSandbox();
    remote = join(sb.dir, 'remote.git');
    gitSync(sb.dir, 'init', '-q', '--bare', '-b', 'main', remote);
    gitSync(sb.repo, 'remote', 'add', 'origin', 'https://github.com/octo-org/app.git');
    gitSync(sb.repo, 'config', `url.${remote}.insteadOf`, 'https://github.com/octo-org/app.git');
    gitSync(sb.repo, 'push', '-q', 'origin', 'main');
    sb.writeConfig(['forge:', '  github:', '    webhook_secret: the-github-webhook-secret-0123', '    bot: conductor-bot', `    api_url: ${gh.url}`, ''].join('\n'));
    server = await launchConductor({ root: sb.root, config: sb.config, dir: sb.dir, env: sb.env({ CONDUCTOR_API_KEY: '', CONDUCTOR_NO_AUTH: '1', CONDUCTOR_GITHUB_TOKEN: 'ghp_ui-token' }), ownsDir: false });
    const res = await fetch(`${server.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: P, task_id: T1, agent_type: 'writer', prompt: 'Write ALPHA into the shared file', project_root: sb.repo, isolation: 'worktree', config: { WRITE_TEXT: 'ALPHA' } }),
    });
    expect(res.status).toBe(201);
    await eventually(`${T1} to finish`, async () => ((await (await fetch(`${server!.url}/api/projects/${P}/tasks/${T1}`)).json()) as { status: string }).status === 'all_finished', 30_000);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stopConductor(server);
    await gh?.close();
    sb?.cleanup();
  });

  it("opens the task's pull request from the diff view: the uncommitted work is committed, pushed, and the pull request shown ready (the task is done)", () =>
    onFailure(page, server!, 'pull-request', async () => {
      await page.goto(`${server!.url}/ui/`);
      await page.locator(`[role=treeitem][data-key="t:${T1}"]`).click();
      await page.getByRole('tab', { name: 'diff' }).click();
      await page.getByRole('button', { name: 'Open pull request' }).click();
      await page.getByRole('status').filter({ hasText: 'Pull request #1347 opened' }).waitFor();
      const badge = page.getByTestId('pull-request-status');
      await badge.filter({ hasText: 'octo-org/app #1347 ready for review' }).waitFor();
      expect(await badge.getAttribute('href')).toBe('https://github.com/octo-org/app/pull/1347');
      await page.getByRole('button', { name: 'Update pull request' }).waitFor();
      // what the agent left uncommitted became one commit on the task branch, pushed to the remote
      const branch = `conductor/${T1}`;
      expect(gitSync(remote, 'log', '-1', '--format=%s', branch).trim()).toBe(`conductor: uncommitted changes of ${T1}`);
      expect(gitSync(remote, 'show', `${branch}:shared.txt`)).toContain('ALPHA');
      expect(gh.pulls.get(1347)).toMatchObject({ title: 'Write ALPHA into the shared file', head: branch, base: 'main', draft: false });
      expect(gh.problems).toEqual([]);
      await shot(page, 'view-pull-request');
    }));
});
