/**
 * #30 item 2: the server's task stop (DELETE /api/v1/tasks/{id}) ends the task as stopped. It
 * writes DONE (api.md #12) and stops the tree; the loop then took the DONE for a completion and
 * posted "task completed" and the project-bus completion FACT. Real bin/conductor, real agent,
 * real webhook receiver. Needs `npm run build`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { RunsLayout } from '@app/storage';
import { webhookReceiver, type WebhookReceiver } from '../../utils/webhook-receiver';
import { getJson, postJson, RunningServer, startConductor, waitFor, writeConfig, writeFakeAgent } from './helpers';

describe('server task stop ends the task stopped, without a completion (#30 item 2)', () => {
  let dir: string;
  let receiver: WebhookReceiver;
  let server: RunningServer;
  let layout: RunsLayout;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'task-cancel-e2e-'));
    receiver = await webhookReceiver();
    const config = writeConfig(dir, writeFakeAgent(dir), `webhook:\n  url: ${receiver.url}\n  timeout: 5s\n`);
    layout = new RunsLayout(join(dir, 'runs'));
    server = await startConductor(dir, layout.root, config);
  });
  afterAll(async () => {
    await server.stop('SIGKILL');
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const messages = (path: string) => {
    try {
      return readMessages(path);
    } catch {
      return [];
    }
  };

  it('DELETE /api/v1/tasks/{id}: the run is stopped (run_stop), the loop posts "task stopped" and no completion', async () => {
    const task = 'task-20260101-000000-cancelme';
    // the agent waits for a file that never appears: only the stop ends it
    const created = await postJson(`${server.url}/api/v1/tasks`, { project_id: 'proj', task_id: task, agent_type: 'fake', prompt: 'work', config: { RELEASE_FILE: join(dir, 'never') } });
    expect(created.status).toBe(201);
    const bus = layout.taskBus('proj', task);
    await waitFor('the agent to run', () => messages(bus).some((m) => m.type === 'RUN_START'));

    const cancel = await getJson(`${server.url}/api/v1/tasks/${task}?project_id=proj`, { method: 'DELETE' });
    expect(cancel).toEqual({ status: 202, body: { stopped_runs: 1 } });

    const stopped = await waitFor('the loop to end stopped', () => messages(bus).find((m) => m.type === 'INFO' && m.body.startsWith('task stopped')));
    expect(stopped.body).toMatch(/not restarting$/);
    const runStop = await waitFor('the run_stop webhook', () => receiver.received.map((r) => JSON.parse(r.body)).find((b) => b.event === 'run_stop'));
    expect(runStop).toMatchObject({ project_id: 'proj', task_id: task, run_id: created.body.run_id, status: 'failed' });

    expect(messages(bus).filter((m) => /^task completed/.test(m.body))).toEqual([]);
    expect(messages(layout.projectBus('proj')).filter((m) => m.task_id === task)).toEqual([]);
    expect(receiver.received.map((r) => JSON.parse(r.body).event)).toEqual(['run_stop']);
  });
});
