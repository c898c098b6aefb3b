// A fake agent blocked in `run-agent ask --wait` gets the answer typed into the dashboard's answer
// box: real conductor server, real headless Chromium (Debian chromium + playwright-core).
import { ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { RunsLayout } from '@app/storage';
import { agentEnv, runInfos, waitFor } from '../runner/helpers';
import { FAKE_AGENT } from '../../utils/api-app';
import { announcedPort } from '../../utils/ports';

const REPO = join(__dirname, '..', '..', '..');
const CONDUCTOR = join(REPO, 'bin', 'conductor');
const ARTIFACTS = join(REPO, 'test-artifacts', 'ui');
const PROJECT = 'ni-ui';
const TASK = 'task-20260101-000000-ask-from-ui';
const QUESTION = 'Should the release be called 2.0 or 1.5?';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

jest.setTimeout(180_000);

describe('needs-input in the dashboard (#17)', () => {
  let browser: Browser;
  let page: Page;
  let proc: ChildProcess;
  let output = '';
  let url = '';
  const dir = mkdtempSync(join(tmpdir(), 'ni-ui-'));
  const root = join(dir, 'runs');

  beforeAll(async () => {
    if (!existsSync('/usr/bin/chromium')) throw new Error('these tests drive /usr/bin/chromium: install it with `apt-get install -y chromium`');
    if (!existsSync(join(REPO, 'frontend', 'dist', 'index.html'))) execSync('npm run build', { cwd: join(REPO, 'frontend'), stdio: 'ignore' });
    mkdirSync(root);
    mkdirSync(join(dir, 'home'));
    writeFileSync(join(dir, 'config.yaml'), `agents:\n  fake:\n    type: command\n    command: ${FAKE_AGENT}\n`);
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
    await fetch(`${url}/api/v1/tasks/${TASK}?project_id=${PROJECT}`, { method: 'DELETE' }).catch(() => undefined);
    if (proc && proc.exitCode === null) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 8000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('run-agent ask --wait in an agent returns the answer posted from the UI answer box', async () => {
    try {
      const created = await fetch(`${url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: PROJECT, task_id: TASK, agent_type: 'fake', prompt: 'prepare the release', config: agentEnv({ FAKE_AGENT_ASK_WAIT: QUESTION, FAKE_AGENT_DONE: '1' }) }),
      });
      expect(created.status).toBe(201);

      // the webhook's link form preselects the task
      await page.goto(`${url}/ui/?project=${PROJECT}&task=${TASK}`);
      const panel = page.getByRole('region', { name: 'Open questions' });
      await panel.getByText(QUESTION).waitFor({ timeout: 30_000 });
      await panel.getByRole('button', { name: `${PROJECT} / ${TASK}` }).waitFor();
      const banner = page.locator('.banner-input');
      await banner.getByText('This task needs input.').waitFor();
      await banner.getByText(QUESTION).waitFor();
      await page.locator('.status.status-needs_input', { hasText: 'needs_input' }).first().waitFor();
      await page.screenshot({ path: join(mkdirAndReturn(ARTIFACTS), 'needs-input-banner.png') });

      await banner.getByRole('textbox').fill('Call it 2.0');
      await banner.getByRole('button', { name: 'Answer' }).click();
      await banner.waitFor({ state: 'detached', timeout: 30_000 });
      await panel.waitFor({ state: 'detached', timeout: 30_000 });

      const layout = new RunsLayout(root);
      const taskDir = layout.taskDir(PROJECT, TASK);
      await waitFor(() => existsSync(join(taskDir, 'DONE')) && runInfos(taskDir)[0]?.status === 'completed', 30_000);
      const run = runInfos(taskDir)[0];
      expect(readFileSync(join(layout.runDir(PROJECT, TASK, run.run_id), 'answer.txt'), 'utf8')).toBe('Call it 2.0\n');
      expect(runInfos(taskDir)).toHaveLength(1);
    } catch (err) {
      await page.screenshot({ path: join(mkdirAndReturn(ARTIFACTS), 'failed-needs-input.png') }).catch(() => undefined);
      writeFileSync(join(mkdirAndReturn(ARTIFACTS), 'failed-needs-input-server.log'), output);
      throw err;
    }
  });
});

function mkdirAndReturn(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}
