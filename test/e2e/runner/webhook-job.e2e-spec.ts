import { createHmac } from 'node:crypto';
import { runJob } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { webhookReceiver } from '../../utils/webhook-receiver';
import { agentEnv, busTypesAndBodies, PROJECT, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

describe('run_stop webhook of a job (D14)', () => {
  const tmp = tempRoot();
  afterAll(() => tmp.cleanup());

  it('is delivered with a valid signature after a retry, and the job result waits for it', async () => {
    const hook = await webhookReceiver([500, 200]);
    try {
      const config = { agents: {}, webhook: { url: hook.url, events: ['run_stop'], secret: 's3cret', timeout: '2s' } } as never;
      const task = taskId('hook');
      const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'claude', config, env: agentEnv(), webhookBackoffMs: [10, 10] });
      expect(result.ok).toBe(true);
      await expect(result.webhook).resolves.toBe(true);
      expect(hook.received).toHaveLength(2);
      const last = hook.received[1];
      const expected = 'sha256=' + createHmac('sha256', 's3cret').update(last.body).digest('hex');
      expect(last.headers['x-conductor-signature']).toBe(expected);
      expect(last.headers['content-type']).toBe('application/json');
      const payload = JSON.parse(last.body);
      expect(payload).toMatchObject({ event: 'run_stop', project_id: PROJECT, task_id: task, run_id: result.runId, agent_type: 'claude', status: 'completed', exit_code: 0 });
      expect(payload.error_summary).toBeUndefined();
      expect(typeof payload.duration_seconds).toBe('number');
    } finally {
      hook.server.close();
    }
  });

  it('gives up after three failed attempts with a WARN on the task bus', async () => {
    const hook = await webhookReceiver([500, 502, 503]);
    try {
      const config = { agents: {}, webhook: { url: hook.url, events: [], secret: '', timeout: '2s' } } as never;
      const task = taskId('hookfail');
      const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'x', agent: 'codex', config, env: agentEnv(), webhookBackoffMs: [1, 1] });
      await expect(result.webhook).resolves.toBe(false);
      expect(hook.received).toHaveLength(3);
      expect(hook.received[0].headers['x-conductor-signature']).toBeUndefined();
      const bus = busTypesAndBodies(new RunsLayout(tmp.root).taskBus(PROJECT, task));
      expect(bus[bus.length - 1]).toBe('WARN webhook delivery failed: webhook delivery failed after 3 attempts: unexpected status 503');
    } finally {
      hook.server.close();
    }
  });
});
