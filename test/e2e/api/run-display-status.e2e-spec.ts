/**
 * Issue #12 items 6, 7, 9 (API): stopped and cancelled runs keep upstream's status/exit_code and
 * gain `display_status`; the configured agent name is served as `agent_name`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, TestApi } from '../../utils/api-app';
import { seedRun } from '../../utils/run-fixtures';

const STOPPED = 'task-20260101-120000-stopped';
const CANCELLED = 'task-20260101-120000-cancelled';
const RUN = '20260101-1200000000-9-1';

describe('run display_status and agent_name', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createApiApp();
    const stopped = { status: 'failed' as const, exit_code: 143, error_summary: 'stopped by run-agent stop (pid 1) (SIGTERM)', agent: 'command', agent_name: 'smart' };
    seedRun(api.root, 'p', STOPPED, RUN, stopped);
    seedRun(api.root, 'p', CANCELLED, RUN, stopped);
    fs.writeFileSync(path.join(api.root, 'p', CANCELLED, 'CANCELLED'), 'cancelled_at: 2026-01-01T00:00:00Z\nreason: r\n');
    seedRun(api.root, 'p', 'task-20260101-120000-failed', RUN, { status: 'failed', exit_code: 1 });
  });
  afterAll(async () => api.close());
  const get = async (url: string) => JSON.parse((await api.app.inject({ method: 'GET', url })).body);

  it('task detail runs: upstream fields unchanged, display_status and agent_name added', async () => {
    const detail = await get(`/api/projects/p/tasks/${STOPPED}`);
    expect(detail.runs[0]).toMatchObject({ status: 'failed', exit_code: 143, display_status: 'stopped', agent: 'command', agent_name: 'smart' });
    expect((await get(`/api/projects/p/tasks/${CANCELLED}`)).runs[0]).toMatchObject({ status: 'failed', display_status: 'cancelled' });
    expect((await get('/api/projects/p/tasks/task-20260101-120000-failed')).runs[0]).toMatchObject({ status: 'failed', display_status: 'failed' });
  });

  it('task list and flat runs carry the added fields', async () => {
    const list = await get('/api/projects/p/tasks');
    const items = (list.items ?? list) as Array<Record<string, unknown>>;
    expect(items.find((t) => t.id === CANCELLED)).toMatchObject({ last_run_status: 'failed', last_run_exit_code: 143, last_run_display_status: 'cancelled', last_run_agent_name: 'smart' });
    const flat = await get('/api/projects/p/runs/flat');
    expect(flat.runs.find((r: { task_id: string }) => r.task_id === STOPPED)).toMatchObject({ status: 'failed', display_status: 'stopped', agent_name: 'smart' });
  });
});
