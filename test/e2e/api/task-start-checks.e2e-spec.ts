// POST /api/v1/tasks says when a task cannot start (issue #13 item 5): 422 before anything is
// written for what can be checked; a later start failure shows as a failed run with its reason.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, TestApi, waitUntil } from '../../utils/api-app';
import { killGroup } from '../../utils/run-fixtures';

const P = 'startcheck';

describe('task start checks', () => {
  let api: TestApi;
  const post = (payload: object) => api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload });

  beforeAll(async () => {
    api = await createApiApp();
  });
  afterAll(async () => api.close());

  it('answers 422 with the reason for a missing agent binary, and writes nothing', async () => {
    const res = await post({ project_id: P, task_id: 'task-20260101-120000-nobin', agent_type: 'codex', prompt: 'x', config: { PATH: '/nonexistent' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toEqual({ code: 'UNPROCESSABLE', message: 'agent cli "codex" not found in PATH', details: { agent_type: 'codex' } });
    expect(fs.existsSync(path.join(api.root, P))).toBe(false);
  });

  it('answers 422 for an unknown agent', async () => {
    const res = await post({ project_id: P, task_id: 'task-20260101-120000-unknown', agent_type: 'gpt9', prompt: 'x' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toMatch(/^unknown agent_type "gpt9": use one of /);
    expect(fs.existsSync(path.join(api.root, P))).toBe(false);
  });

  it('a start that fails later shows the task failed with the reason (run-info, API)', async () => {
    const t = 'task-20260101-120000-locked';
    const taskDir = path.join(api.root, P, t);
    fs.mkdirSync(taskDir, { recursive: true });
    // another Ralph loop of this task holds TASK.lock (a real flock held by another process)
    // it says "locked" once it holds the lock (the file exists a moment before flock(2) is taken)
    const holder = spawn('flock', ['-x', path.join(taskDir, 'TASK.lock'), 'sh', '-c', 'echo locked; exec sleep 60'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let said = '';
    holder.stdout!.on('data', (d) => (said += d));
    try {
      await waitUntil(() => said.includes('locked'));
      const res = await post({ project_id: P, task_id: t, agent_type: 'fake', prompt: 'x', config: { FAKE_AGENT_DONE: '1' } });
      expect(res.statusCode).toBe(201);
      const runId = res.json().run_id as string;
      const task = await waitUntil(async () => {
        const d = (await api.app.inject({ method: 'GET', url: `/api/projects/${P}/tasks/${t}` })).json();
        return d.runs?.[0]?.status === 'failed' ? d : undefined;
      });
      expect(task.status).toBe('failed');
      expect(task.runs[0]).toMatchObject({ id: runId, status: 'failed', error_summary: expect.stringMatching(/^task did not start: task .* is already running/) });
      const runs = (await api.app.inject({ method: 'GET', url: `/api/projects/${P}/runs/flat` })).json();
      expect(JSON.stringify(runs)).toContain('task did not start');
    } finally {
      killGroup(holder);
    }
  });
});
