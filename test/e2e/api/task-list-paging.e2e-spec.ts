import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProjectDataService } from '../../../apps/api/src/projects/project-data.service';
import { createApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';

// #15: the project task list orders by creation time and summarises only the tasks on its page.
const P = 'paging';
const task = (i: number) => `task-20260101-1200${String(i).padStart(2, '0')}-t${i}`;

describe('project task list paging', () => {
  let api: TestApi;
  const get = async (url: string) => (await api.app.inject({ method: 'GET', url })).json();

  beforeAll(async () => {
    api = await createApiApp();
    for (let i = 0; i < 7; i++) {
      if (i % 3 === 2) {
        // no runs: created when its TASK.md was written
        fs.mkdirSync(path.join(api.root, P, task(i)), { recursive: true });
        const md = path.join(api.root, P, task(i), 'TASK.md');
        fs.writeFileSync(md, 'prompt\n');
        const at = new Date(Date.UTC(2026, 0, 1, 12, 0, i));
        fs.utimesSync(md, at, at);
      } else {
        seedRun(api.root, P, task(i), `20260101-12000${i}0000-1-${i + 1}`, { start_time: new Date(Date.UTC(2026, 0, 1, 12, 0, i)) });
      }
    }
  });
  afterAll(async () => {
    await api.close();
  });
  afterEach(() => jest.restoreAllMocks());

  it('pages concatenate to the whole list, newest first, with the same items', async () => {
    const whole = await get(`/api/projects/${P}/tasks?limit=500`);
    expect(whole.items.map((t: { id: string }) => t.id)).toEqual([6, 5, 4, 3, 2, 1, 0].map(task));
    const pages = [];
    for (const offset of [0, 3, 6]) {
      const page = await get(`/api/projects/${P}/tasks?limit=3&offset=${offset}`);
      expect(page).toMatchObject({ total: 7, limit: 3, offset, has_more: offset + 3 < 7 });
      pages.push(...page.items);
    }
    expect(pages).toEqual(whole.items);
  });

  it('summarises only the tasks on the page (a status filter still needs every summary)', async () => {
    const summaries = jest.spyOn(ProjectDataService.prototype, 'task');
    const page = await get(`/api/projects/${P}/tasks?limit=2&offset=1`);
    expect(page.items.map((t: { id: string }) => t.id)).toEqual([task(5), task(4)]);
    expect(summaries).toHaveBeenCalledTimes(2);
    summaries.mockClear();
    const done = await get(`/api/projects/${P}/tasks?status=done&limit=2`);
    expect(done.total).toBe(0);
    expect(summaries).toHaveBeenCalledTimes(7);
  });
});
