/**
 * run_stop webhooks of runs launched through the API: the server passes its config to the
 * runner, which signs and delivers the payload, retrying failed attempts.
 * Needs `npx nest build api && npx nest build cli`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { webhookReceiver, type WebhookReceiver } from '../../utils/webhook-receiver';
import { postJson, RunningServer, startConductor, waitFor, writeConfig, writeFakeAgent } from './helpers';

describe('webhook delivery of API-launched runs (e2e)', () => {
  const secret = 'hook-secret';
  const standardSecret = `whsec_${randomBytes(32).toString('base64')}`;
  let dir: string;
  let receiver: WebhookReceiver;
  let server: RunningServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-e2e-'));
    receiver = await webhookReceiver([500, 500]); // fails the first two attempts, accepts the third
    const config = writeConfig(dir, writeFakeAgent(dir), `webhook:\n  url: ${receiver.url}\n  secret: ${secret}\n  standard_webhooks_secret: ${standardSecret}\n  timeout: 5s\n`);
    server = await startConductor(dir, join(dir, 'runs'), config);
  });
  afterAll(async () => {
    await server.stop('SIGKILL');
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers a signed run_stop, retrying until the receiver accepts it (third attempt)', async () => {
    const created = await postJson(`${server.url}/api/v1/tasks`, { project_id: 'proj', task_id: 'task-20260101-000000-hook', agent_type: 'fake', prompt: 'hello' });
    expect(created.status).toBe(201);

    await waitFor('the third delivery attempt', () => receiver.received.length >= 3);
    expect(receiver.received.map((d) => d.answered)).toEqual([500, 500, 200]);
    expect(new Set(receiver.received.map((d) => d.body)).size).toBe(1);

    const [first] = receiver.received;
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers['user-agent']).toBe('conductor-loop/1.0');
    const expected = 'sha256=' + createHmac('sha256', secret).update(first.body).digest('hex');
    expect(first.headers['x-conductor-signature']).toBe(expected);
    // Standard Webhooks: one webhook-id for the three attempts, each signed over its own timestamp
    expect(new Set(receiver.received.map((d) => d.headers['webhook-id'])).size).toBe(1);
    for (const d of receiver.received) expect(new Webhook(standardSecret).verify(d.body, d.headers as Record<string, string>)).toEqual(JSON.parse(first.body));

    const payload = JSON.parse(first.body);
    expect(payload).toMatchObject({
      event: 'run_stop',
      project_id: 'proj',
      task_id: 'task-20260101-000000-hook',
      run_id: created.body.run_id,
      status: 'completed',
      exit_code: 0,
    });
    expect(['command', 'fake']).toContain(payload.agent_type);
    expect(typeof payload.duration_seconds).toBe('number');
    expect(new Date(payload.stopped_at).getTime()).toBeGreaterThanOrEqual(new Date(payload.started_at).getTime());
  });
});
