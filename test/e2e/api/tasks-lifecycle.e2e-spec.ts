import * as fs from 'node:fs';
import * as path from 'node:path';
import { BusWriter, readMessages } from '@app/messagebus';
import { createApiApp, TestApi, waitUntil } from '../../utils/api-app';
import { killGroup, spawnSleeper } from '../../utils/run-fixtures';

const P = 'lifecycle';

describe('task lifecycle through the API (fake command agent)', () => {
  let api: TestApi;
  const inject = (method: string, url: string, payload?: unknown) => api.app.inject({ method: method as 'GET', url, payload: payload as object });
  const taskStatus = async (t: string) => (await inject('GET', `/api/projects/${P}/tasks/${t}`)).json();

  beforeAll(async () => {
    api = await createApiApp();
  });
  afterAll(async () => api.close());

  it('creates a task that runs to all_finished; its runs, files and messages are visible', async () => {
    const t = 'task-20260101-120000-happy';
    const res = await inject('POST', '/api/v1/tasks', {
      project_id: P,
      task_id: t,
      agent_type: 'fake',
      prompt: 'say hello',
      config: { FAKE_AGENT_DONE: '1', FAKE_AGENT_TEXT: 'hello from fake', FAKE_AGENT_STDERR: 'warn line' },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ project_id: P, task_id: t, run_id: expect.stringMatching(/^\d{8}-\d{10}-\d+-\d+$/), status: 'started' });
    expect(fs.readFileSync(path.join(api.root, P, t, 'TASK.md'), 'utf8')).toBe('say hello\n');

    const done = await waitUntil(async () => {
      const d = await taskStatus(t);
      return d.status === 'all_finished' ? d : undefined;
    });
    expect(done.runs[0]).toMatchObject({ id: body.run_id, status: 'completed', exit_code: 0 });
    const stdout = (await inject('GET', `/api/projects/${P}/tasks/${t}/runs/${body.run_id}/file?name=stdout`)).json();
    expect(stdout.content).toContain('hello from fake');
    const stderr = (await inject('GET', `/api/projects/${P}/tasks/${t}/runs/${body.run_id}/file?name=stderr`)).json();
    expect(stderr.content).toContain('warn line');
    // the runner posts RUN_STOP right after it records the exit, so wait for it rather than race it
    const msgs = await waitUntil(async () => {
      const list = (await inject('GET', `/api/projects/${P}/tasks/${t}/messages`)).json().messages as { type: string; run_id: string }[];
      return list.some((m) => m.type === 'RUN_STOP') ? list : undefined;
    });
    expect(msgs.filter((m) => m.type === 'RUN_START' || m.type === 'RUN_STOP').map((m) => [m.type, m.run_id])).toEqual([
      ['RUN_START', body.run_id],
      ['RUN_STOP', body.run_id],
    ]);
    const v1 = (await inject('GET', `/api/v1/tasks/${t}?project_id=${P}`)).json();
    expect(v1).toMatchObject({ project_id: P, task_id: t, status: 'all_finished' });
    const audit = fs.readFileSync(path.join(api.root, '_audit', 'form-submissions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(audit).toContainEqual(expect.objectContaining({ endpoint: 'POST /api/v1/tasks', project_id: P, task_id: t, run_id: body.run_id }));
  });

  it('resumes a task stopped in the same second: attach_mode resume clears the stop markers, the loop runs', async () => {
    const t = 'task-20260101-120000-resume-now';
    const dir = path.join(api.root, P, t);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'TASK.md'), 'say hello\n');
    // what DELETE /api/v1/tasks leaves behind a moment before the user presses Resume
    fs.writeFileSync(path.join(dir, 'STOP-REQUESTED'), `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}\n`);
    fs.writeFileSync(path.join(dir, 'CANCELLED'), 'cancelled_at: 2026-01-01T12:00:00Z\nreason: test\n');
    const res = await inject('POST', '/api/v1/tasks', { project_id: P, task_id: t, agent_type: 'fake', prompt: 'say hello', attach_mode: 'resume', config: { FAKE_AGENT_DONE: '1' } });
    expect(res.statusCode).toBe(201);
    expect(fs.existsSync(path.join(dir, 'STOP-REQUESTED'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'CANCELLED'))).toBe(false);
    const done = await waitUntil(async () => {
      const d = await taskStatus(t);
      return d.status === 'all_finished' ? d : undefined;
    });
    expect(done.runs).toEqual([expect.objectContaining({ id: res.json().run_id, status: 'completed' })]);
  });

  it('POST …/resume reopens a DONE task and clears a same-second stop marker', async () => {
    const t = 'task-20260101-120000-reopen';
    const dir = path.join(api.root, P, t);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'TASK.md'), 'x\n');
    fs.writeFileSync(path.join(dir, 'DONE'), '');
    fs.writeFileSync(path.join(dir, 'STOP-REQUESTED'), `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}\n`);
    const res = await inject('POST', `/api/projects/${P}/tasks/${t}/resume`);
    expect(res.statusCode).toBe(200);
    expect(fs.readdirSync(dir).sort()).toEqual(['TASK.md']);
  });

  it('validates the create request and changes nothing on bad input', async () => {
    const base = { project_id: 'untouched', task_id: 'task-20260101-120000-bad', agent_type: 'fake', prompt: 'x' };
    const cases: [object, string][] = [
      [{ ...base, agent_type: ' ' }, 'agent_type is required'],
      [{ ...base, prompt: '' }, 'prompt is required'],
      [{ ...base, attach_mode: 'merge' }, 'invalid attach_mode "merge": must be create, attach, or resume'],
      [{ ...base, project_root: '/definitely/not/here' }, 'project_root does not exist: /definitely/not/here'],
      [{ ...base, thread_message_type: 'USER_REQUEST' }, 'thread_message_type requires thread_parent'],
      [{ ...base, depends_on: ['task-20260101-120000-bad'] }, 'cannot depend on itself'],
      [{ ...base, surprise: true }, 'property surprise should not exist'],
      [{ ...base, task_id: 'task-20260101-120000-x' }, 'invalid task ID'],
    ];
    for (const [payload, message] of cases) {
      const res = await inject('POST', '/api/v1/tasks', payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain(message);
    }
    expect(fs.existsSync(path.join(api.root, 'untouched'))).toBe(false);
  });

  it('rejects an unknown agent_type with 422 before writing anything; known types and config names pass', async () => {
    const t = 'task-20260101-120000-noagent';
    const res = await inject('POST', '/api/v1/tasks', { project_id: 'untouched', task_id: t, agent_type: 'gpt9', prompt: 'x' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toBe('unknown agent_type "gpt9": use one of claude, codex, gemini, perplexity, xai, command, fake');
    expect(fs.existsSync(path.join(api.root, 'untouched'))).toBe(false);
    const auditPath = path.join(api.root, '_audit', 'form-submissions.jsonl');
    expect(fs.existsSync(auditPath) ? fs.readFileSync(auditPath, 'utf8') : '').not.toContain(t);

    // accepted: a known type in any case (the monitoring-mode server only records the task) and a config name
    const mon = await createApiApp({ disableTaskStart: true });
    try {
      for (const [task, agentType] of [
        ['task-20260101-120000-typed', 'Codex'],
        ['task-20260101-120000-named', 'fake'],
      ]) {
        const ok = await mon.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { project_id: P, task_id: task, agent_type: agentType, prompt: 'x' } });
        expect(ok.statusCode).toBe(201);
      }
    } finally {
      await mon.close();
    }
  });

  it('stops a running run (#44) and the task can be resumed (#35) and cancelled (#12)', async () => {
    const t = 'task-20260101-120000-stopme';
    const res = await inject('POST', '/api/v1/tasks', { project_id: P, task_id: t, agent_type: 'fake', prompt: 'sleep', config: { FAKE_AGENT_SLEEP_MS: '60000' } });
    const runId = res.json().run_id;
    await waitUntil(async () => (await taskStatus(t)).runs?.[0]?.status === 'running');
    const stop = await inject('POST', `/api/projects/${P}/tasks/${t}/runs/${runId}/stop`);
    expect(stop.statusCode).toBe(202);
    expect(stop.json()).toEqual({ run_id: runId, message: 'SIGTERM sent' });
    const stopped = await waitUntil(async () => {
      const d = await taskStatus(t);
      return d.runs.every((r: { status: string }) => r.status !== 'running') ? d : undefined;
    });
    expect(stopped.runs[0].status).toBe('failed');
    expect((await inject('POST', `/api/projects/${P}/tasks/${t}/runs/${runId}/stop`)).statusCode).toBe(409);

    fs.writeFileSync(path.join(api.root, P, t, 'DONE'), '');
    const resumed = await inject('POST', `/api/projects/${P}/tasks/${t}/resume`);
    expect(resumed.json()).toEqual({ project_id: P, task_id: t, resumed: true });

    const again = await inject('POST', '/api/v1/tasks', { project_id: P, task_id: t, agent_type: 'fake', prompt: 'ignored', config: { FAKE_AGENT_SLEEP_MS: '60000' }, attach_mode: 'resume' });
    expect(again.statusCode).toBe(201);
    expect(fs.readFileSync(path.join(api.root, P, t, 'TASK.md'), 'utf8')).toBe('sleep\n');
    await waitUntil(async () => (await taskStatus(t)).runs.some((r: { status: string }) => r.status === 'running'));
    const cancel = await inject('DELETE', `/api/v1/tasks/${t}`);
    expect(cancel.statusCode).toBe(202);
    expect(cancel.json()).toEqual({ stopped_runs: 1 });
    const ended = await waitUntil(async () => {
      const d = await taskStatus(t);
      return d.runs.every((r: { status: string }) => r.status !== 'running') ? d : undefined;
    });
    expect(ended.done).toBe(true);
    expect(ended.status).toBe('all_finished');
  });

  it('opens a threaded child task answering a QUESTION (thread_parent)', async () => {
    const parent = 'task-20260101-120000-parent';
    fs.mkdirSync(path.join(api.root, P, parent), { recursive: true });
    const bus = new BusWriter(path.join(api.root, P, parent, 'TASK-MESSAGE-BUS.md'));
    const q = await bus.append({ type: 'QUESTION', project_id: P, task_id: parent, run_id: 'run-parent-1', body: 'which db?' });
    const info = await bus.append({ type: 'INFO', project_id: P, task_id: parent, run_id: 'run-parent-1', body: 'fyi' });
    const child = 'task-20260101-120000-child';
    const tp = { project_id: P, task_id: parent, run_id: 'run-parent-1', message_id: q.msg_id };
    const base = { project_id: P, task_id: child, agent_type: 'fake', prompt: 'use postgres', config: { FAKE_AGENT_DONE: '1' } };
    const wrongType = await inject('POST', '/api/v1/tasks', { ...base, thread_parent: { ...tp, message_id: info.msg_id } });
    expect(wrongType.statusCode).toBe(409);
    expect(wrongType.json().error).toEqual({ code: 'CONFLICT', message: 'parent message type "INFO" is not supported', details: { allowed_parent_types: 'QUESTION,FACT' } });
    const missing = await inject('POST', '/api/v1/tasks', { ...base, thread_parent: { ...tp, message_id: 'MSG-19990101-000000-000000000-PID00001-0001' } });
    expect(missing.json().error.message).toBe('parent message not found');
    const created = await inject('POST', '/api/v1/tasks', { ...base, thread_parent: tp });
    expect(created.statusCode).toBe(201);
    const detail = (await inject('GET', `/api/projects/${P}/tasks/${child}`)).json();
    expect(detail.thread_parent).toEqual({ project_id: P, task_id: parent, run_id: 'run-parent-1', message_id: q.msg_id, message_type: 'QUESTION' });
    const childMsgs = readMessages(path.join(api.root, P, child, 'TASK-MESSAGE-BUS.md'));
    expect(childMsgs[0]).toMatchObject({ type: 'USER_REQUEST', body: 'use postgres', parents: [expect.objectContaining({ msg_id: q.msg_id, kind: 'thread_answer' })] });
    const parentMsgs = readMessages(path.join(api.root, P, parent, 'TASK-MESSAGE-BUS.md'));
    expect(parentMsgs.pop()).toMatchObject({ type: 'USER_REQUEST', body: `threaded user request opened child task ${P}/${child}` });
    await waitUntil(async () => (await taskStatus(child)).status === 'all_finished');
  });

  it('adopts a running process (process_import) that conductor then refuses to stop', async () => {
    const sleeper = spawnSleeper();
    try {
      const t = 'task-20260101-120000-imported';
      const out = path.join(api.dir, 'imported.log');
      fs.writeFileSync(out, 'external output\n');
      const bad = await inject('POST', '/api/v1/tasks', { project_id: P, task_id: t, agent_type: 'fake', prompt: 'x', process_import: { pid: 0, stdout_path: out } });
      expect(bad.json().error.message).toBe('process_import.pid must be > 0');
      const res = await inject('POST', '/api/v1/tasks', { project_id: P, task_id: t, agent_type: 'fake', prompt: 'x', process_import: { pid: sleeper.pid, stdout_path: out, ownership: 'external' } });
      expect(res.statusCode).toBe(201);
      const run = (await taskStatus(t)).runs[0];
      expect(run).toMatchObject({ id: res.json().run_id, status: 'running', process_ownership: 'external', pid: sleeper.pid });
      const stop = await inject('POST', `/api/projects/${P}/tasks/${t}/runs/${run.id}/stop`);
      expect(stop.json().error).toEqual({ code: 'CONFLICT', message: 'run is externally owned and cannot be stopped by conductor', details: { run_id: run.id } });
    } finally {
      killGroup(sleeper);
    }
  });

  it('creates but does not launch in monitoring mode (disableTaskStart)', async () => {
    const mon = await createApiApp({ disableTaskStart: true });
    try {
      const t = 'task-20260101-120000-monitor';
      const res = await mon.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { project_id: P, task_id: t, agent_type: 'fake', prompt: 'x' } });
      expect(res.statusCode).toBe(201);
      expect(res.json().status).toBe('started');
      const runDir = path.join(mon.root, P, t, 'runs', res.json().run_id);
      expect(fs.existsSync(runDir)).toBe(true);
      // A launch cannot be seen not to happen at an instant: a control task posted after it to a
      // server that does start tasks gets its run-info; by then a launch would have written ours.
      const control = 'task-20260101-120000-control';
      const started = await inject('POST', '/api/v1/tasks', { project_id: P, task_id: control, agent_type: 'fake', prompt: 'x', config: { FAKE_AGENT_DONE: '1' } });
      await waitUntil(() => fs.existsSync(path.join(api.root, P, control, 'runs', started.json().run_id, 'run-info.yaml')));
      expect(fs.readdirSync(runDir)).toEqual([]);
    } finally {
      await mon.close();
    }
  });
});
