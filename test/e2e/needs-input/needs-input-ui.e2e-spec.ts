// A fake agent blocked in `run-agent ask --wait` gets the answer typed into the dashboard's answer
// box: real conductor server, real headless Chromium (Debian chromium + playwright-core).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { RunsLayout } from '@app/storage';
import { agentEnv, runInfos, waitFor } from '../runner/helpers';
import { FAKE_AGENT } from '../../utils/api-app';
import { type Conductor, launchBrowser, onFailure, shot, startConductor, stopConductor } from '../ui/helpers';

const PROJECT = 'ni-ui';
const TASK = 'task-20260101-000000-ask-from-ui';
const QUESTION = 'Should the release be called 2.0 or 1.5?';

jest.setTimeout(180_000);

describe('needs-input in the dashboard (#17)', () => {
  let browser: Browser;
  let page: Page;
  let server: Conductor | undefined;

  beforeAll(async () => {
    server = await startConductor({ agents: { fake: FAKE_AGENT } });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await stopConductor(server);
  });

  it('run-agent ask --wait in an agent returns the answer posted from the UI answer box', () => onFailure(page, server!, 'needs-input', async () => {
    const { url, root } = server!;
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
    await shot(page, 'needs-input-banner');

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
  }));
});
