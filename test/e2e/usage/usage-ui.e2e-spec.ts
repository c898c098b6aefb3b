// The dashboard's usage panel (#18): task and tree usage, the hold state, Pause/Unpause — real
// conductor server, real headless Chromium (Debian chromium + playwright-core).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { FAKE_AGENT } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';
import { waitFor } from '../runner/helpers';
import { type Conductor, launchBrowser, onFailure, shot, startConductor, stopConductor } from '../ui/helpers';

const PROJECT = 'usage-ui';
const TASK = 'task-20260101-000000-usage-root';
const CHILD = 'task-20260101-000000-usage-child';

jest.setTimeout(180_000);

describe('usage panel in the dashboard (#18)', () => {
  let browser: Browser;
  let page: Page;
  let server: Conductor | undefined;

  beforeAll(async () => {
    server = await startConductor({
      agents: { fake: FAKE_AGENT },
      seed: (root) => {
        seedRun(root, PROJECT, TASK, '20260101-0000000000-7-1', { agent: 'claude', usage: { input_tokens: 12000, output_tokens: 345, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.25 } });
        seedRun(root, PROJECT, CHILD, '20260101-0000000000-7-2', { agent: 'codex', parent_run_id: '20260101-0000000000-7-1', usage: { input_tokens: 1000, output_tokens: 55, cache_read_tokens: 0, cache_write_tokens: 0 } });
      },
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await stopConductor(server);
  });

  it('shows the task and tree usage, and pauses/unpauses the task', () => onFailure(page, server!, 'usage-panel', async () => {
    const { url, root } = server!;
    await page.goto(`${url}/ui/?project=${PROJECT}&task=${TASK}`);
    const panel = page.getByRole('region', { name: 'Usage' });
    const own = panel.locator('tr', { hasText: 'This task' });
    await own.waitFor({ timeout: 30_000 });
    expect((await own.locator('td').allInnerTexts()).map((t) => t.trim())).toEqual(['This task', '1', '12,000', '345', '0', '12,345', '$0.25']);
    expect((await panel.locator('tr', { hasText: 'Task tree' }).locator('td').allInnerTexts()).map((t) => t.trim())).toEqual(['Task tree', '2', '13,000', '400', '0', '13,400', '$0.25']);

    await panel.getByRole('button', { name: 'Pause task' }).click();
    await waitFor(() => existsSync(join(root, PROJECT, TASK, 'PAUSED')), 20_000);
    await panel.getByText('Paused (this task): no new attempt until unpaused').waitFor({ timeout: 30_000 });
    await panel.locator('.status.status-held', { hasText: 'paused' }).waitFor();
    await shot(page, 'usage-panel-paused');

    await panel.getByRole('button', { name: 'Unpause task' }).click();
    await waitFor(() => !existsSync(join(root, PROJECT, TASK, 'PAUSED')), 20_000);
    await panel.getByRole('button', { name: 'Pause task' }).waitFor({ timeout: 30_000 });
  }));
});
