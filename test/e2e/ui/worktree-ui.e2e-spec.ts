// The worktree diff view and merge button of the real dashboard (frontend/dist) in headless
// Chromium, against a real `conductor` server whose tasks run in worktrees of a real git repository.
import { ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { gitSync } from '../../utils/git-repo';
import { P, T1, T2, WorktreeSandbox } from '../worktree/helpers';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';

const REPO = join(__dirname, '..', '..', '..');
const CONDUCTOR = join(REPO, 'bin', 'conductor');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

jest.setTimeout(180_000);

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('worktree diff view and merge button in Chromium', () => {
  let browser: Browser;
  let sb: WorktreeSandbox;
  let proc: ChildProcess;
  let url: string;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync('/usr/bin/chromium')) throw new Error('these tests drive /usr/bin/chromium: install it with `apt-get install -y chromium`');
    if (!existsSync(join(REPO, 'frontend', 'dist', 'index.html'))) execSync('npm run build', { cwd: join(REPO, 'frontend'), stdio: 'ignore' });
    sb = new WorktreeSandbox();
    proc = spawn(process.execPath, [CONDUCTOR, '--root', sb.root, '--port', '0', '--host', '127.0.0.1', '--config', sb.config], {
      cwd: sb.dir,
      env: sb.env({ CONDUCTOR_API_KEY: '' }),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let announced = '';
    proc.stdout!.on('data', (d) => (announced += d));
    url = `http://127.0.0.1:${await waitFor('conductor to announce its port', () => announcedPort(announced))}`;
    await eventually('conductor to listen', async () => (await fetch(`${url}/api/v1/health`)).ok || undefined);
    for (const [task, text] of [[T1, 'ALPHA'], [T2, 'BETA']]) {
      const res = await fetch(`${url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: P, task_id: task, agent_type: 'writer', prompt: 'write', project_root: sb.repo, isolation: 'worktree', config: { WRITE_TEXT: text } }),
      });
      expect(res.status).toBe(201);
    }
    for (const task of [T1, T2]) {
      await eventually(`${task} to finish`, async () => ((await (await fetch(`${url}/api/projects/${P}/tasks/${task}`)).json() as { status: string }).status === 'all_finished' ? true : undefined));
    }
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    sb?.cleanup();
  });

  const openDiff = async (task: string) => {
    await page.locator(`[role=treeitem][data-key="t:${task}"]`).click();
    await page.getByRole('tab', { name: 'diff' }).click();
  };

  it('shows the file list and hunks; merges the first task and reports the second one conflicting', async () => {
    await page.goto(`${url}/ui/`);
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
      (await page.locator('.detail-title [data-testid=worktree-badge]').innerText()) === `conductor/${T2} · merge conflict` || undefined);
    expect(gitSync(sb.repo, 'rev-parse', 'main')).toBe(main);
    mkdirSync(join(REPO, 'test-artifacts', 'ui'), { recursive: true });
    await page.screenshot({ path: join(REPO, 'test-artifacts', 'ui', 'view-worktree-diff.png') });
  });
});
