// The dashboard's schedules view (docs/triggers.md) in real Chromium against a real server: the
// configured schedule is listed with its next fire time, "Fire now" starts its task through
// POST /api/v1/schedules/<name>/fire, the history shows the run and links to its task; no serious
// axe violation. Screenshots go to test-artifacts/ui.
import type { Browser, Page } from 'playwright-core';
import { axeViolations, type Conductor, eventually, launchBrowser, onFailure, PROJECT, shot, startConductor, stopConductor } from './helpers';

jest.setTimeout(180_000);

const API_KEY = 'ui-schedules-key';

describe('dashboard schedules view in Chromium', () => {
  let browser: Browser;
  let server: Conductor | undefined;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    server = await startConductor({
      apiKey: API_KEY,
      extraConfig: ['defaults:', '  agent: uiagent', 'schedules:', '  hourly-report:', '    cron: "0 * * * *"', '    timezone: Europe/Berlin', '    task:', `      project: ${PROJECT}`, '      prompt: hourly report', ''].join('\n'),
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await stopConductor(server);
  });

  it('lists the schedule with its next fire time, fires it, shows the run in the history and opens its task', () => onFailure(page, server!, 'schedules-view', async () => {
    const c = server!;
    await page.goto(`${c.url}/ui/#token=${API_KEY}`);
    const region = page.getByRole('region', { name: 'Schedules' });
    await region.waitFor();
    const item = region.locator('[data-schedule="hourly-report"]');
    await eventually('the next fire time', async () => /next in \d+m \d+s|next in \d+s/.test(await item.locator('.schedule-next').innerText()));
    expect(await item.locator('.schedule-meta').innerText()).toContain('0 * * * * Europe/Berlin');
    expect(await item.locator('.schedule-history').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    await item.getByRole('button', { name: 'Fire now: hourly-report' }).click();
    await item.locator('.schedule-history').waitFor();
    await item.locator('.schedule-history summary').click();
    const run = item.locator('.schedule-run').first();
    await eventually('the manual run in the history', async () => /\(manual\) started/.test(await run.innerText()));
    const taskId = (await run.getByRole('button').innerText()).trim();
    expect(taskId).toMatch(/^task-\d{8}-\d{6}-hourly-report-m/);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'view-schedules');

    await run.getByRole('button', { name: taskId }).click();
    await eventually('the task selected', async () => new URL(page.url()).searchParams.get('task') === taskId);
    expect(new URL(page.url()).searchParams.get('project')).toBe(PROJECT);
  }));
});
