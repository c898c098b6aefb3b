// Completion criteria through the REST API (issue #33): the task-create field validated at the
// door, the loop rejecting a DONE until the criterion passes, the task and run views showing it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, TestApi, waitUntil } from '../../utils/api-app';

const P = 'criteria';

describe('POST /api/v1/tasks done_criteria', () => {
  let api: TestApi;
  const post = (payload: object) => api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload });
  const base = { project_id: P, agent_type: 'fake', prompt: 'do it' };

  beforeAll(async () => {
    api = await createApiApp();
  });
  afterAll(async () => api.close());

  it('refuses bad criteria with one 400 line and writes nothing', async () => {
    const t = 'task-20260101-120000-badcrit';
    for (const [extra, message] of [
      [{ done_criteria: [] }, 'done_criteria is empty: give at least one command (an empty list never counts as passed)'],
      [{ done_criteria: ['  '] }, 'done criterion 1 is empty: give a command such as "npm test"'],
      [{ done_criteria: [{ command: 'true', shell: 'bash' }] }, 'done criterion 1: unknown field "shell" (use command and timeout)'],
      [{ done_criteria: ['true'], done_criteria_timeout: 'soon' }, 'done criteria timeout must be a duration between 1s and 24h like 5m, got "soon"'],
      [{ done_criteria: [{ command: 'true', timeout: '48h' }] }, 'done criterion 1 timeout must be a duration between 1s and 24h like 5m, got "48h"'],
    ] as const) {
      const res = await post({ ...base, task_id: t, ...extra });
      expect(res.json().error?.message).toBe(message);
      expect(res.statusCode).toBe(400);
    }
    expect(fs.existsSync(path.join(api.root, P, t))).toBe(false);
  });

  it('a DONE is rejected until the criterion passes; task detail and run views show the checks', async () => {
    const t = 'task-20260101-120000-crit';
    // passes from the task's second run on
    const criterion = '[ "$(ls "$JRUN_TASK_FOLDER/runs" | wc -l)" -ge 2 ]';
    const res = await post({ ...base, task_id: t, config: { FAKE_AGENT_DONE: '1' }, done_criteria: [{ command: criterion, timeout: '30s' }], done_criteria_timeout: '1m' });
    expect(res.statusCode).toBe(201);
    expect(fs.readFileSync(path.join(api.root, P, t, 'TASK-SETTINGS.yaml'), 'utf8')).toBe(
      `done_criteria:\n    - command: ${JSON.stringify(criterion)}\n      timeout: 30s\ndone_criteria_timeout: 1m0s\n`,
    );
    const detail = await waitUntil(async () => {
      const d = (await api.app.inject({ method: 'GET', url: `/api/projects/${P}/tasks/${t}` })).json();
      return d.done && d.criteria?.state === 'passed' ? d : undefined;
    });
    expect(detail.criteria).toMatchObject({ commands: [{ command: criterion, timeout: '30s' }], state: 'passed', rejected: 1 });
    expect(detail.runs.map((r: { criteria?: { passed: boolean } }) => r.criteria?.passed)).toEqual([false, true]);
    const first = detail.runs[0];
    expect(first.criteria).toMatchObject({ passed: false, results: [{ command: criterion, exit_code: 1, passed: false }] });
    const run = (await api.app.inject({ method: 'GET', url: `/api/projects/${P}/tasks/${t}/runs/${first.id}` })).json();
    expect(run.criteria).toEqual(first.criteria);
    expect(fs.readdirSync(path.join(api.root, P, t)).filter((f) => f.startsWith('DONE')).sort()).toEqual(['DONE', `DONE.rejected-${first.id}`]);
  });

  it('the /api/v1 task and run views show the same criteria as the project views', async () => {
    const t = 'task-20260101-120000-critv1';
    const criterion = '[ "$(ls "$JRUN_TASK_FOLDER/runs" | wc -l)" -ge 2 ]';
    expect((await post({ ...base, task_id: t, config: { FAKE_AGENT_DONE: '1' }, done_criteria: [criterion] })).statusCode).toBe(201);
    const detail = await waitUntil(async () => {
      const d = (await api.app.inject({ method: 'GET', url: `/api/projects/${P}/tasks/${t}` })).json();
      return d.done && d.criteria?.state === 'passed' ? d : undefined;
    });
    const v1 = (await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${t}?project_id=${P}` })).json();
    expect(v1.criteria).toEqual(detail.criteria);
    expect(v1.criteria).toMatchObject({ commands: [{ command: criterion }], state: 'passed', rejected: 1 });
    expect(v1.runs.map((r: { run_id: string; criteria?: unknown }) => [r.run_id, r.criteria])).toEqual(detail.runs.map((r: { id: string; criteria?: unknown }) => [r.id, r.criteria]));
    const run = (await api.app.inject({ method: 'GET', url: `/api/v1/runs/${detail.runs[0].id}` })).json();
    expect(run.criteria).toMatchObject({ passed: false, results: [{ command: criterion, exit_code: 1, passed: false }] });
    // a task without criteria has none in either view
    const plain = 'task-20260101-120000-nocrit';
    expect((await post({ ...base, task_id: plain, config: { FAKE_AGENT_DONE: '1' } })).statusCode).toBe(201);
    const plainV1 = await waitUntil(async () => {
      const d = (await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${plain}?project_id=${P}` })).json();
      return d.status === 'all_finished' ? d : undefined;
    });
    expect(plainV1.criteria).toBeUndefined();
    expect(plainV1.runs[0].criteria).toBeUndefined();
  });
});
