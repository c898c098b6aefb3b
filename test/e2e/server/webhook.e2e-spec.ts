/**
 * run_stop webhooks of runs launched through the API: the server passes its config to the
 * runner, which signs and delivers the payload, retrying failed attempts.
 * Needs `npx nest build api && npx nest build cli`.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONDUCTOR, postJson, RunningServer, startServer, waitFor, writeConfig, writeFakeAgent } from './helpers';

interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  answered: number;
}

describe('webhook delivery of API-launched runs (e2e)', () => {
  const secret = 'hook-secret';
  let dir: string;
  let receiver: Server;
  let deliveries: Delivery[];
  let server: RunningServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-e2e-'));
    deliveries = [];
    // fails the first two attempts, accepts the third
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const answered = deliveries.length < 2 ? 500 : 200;
        deliveries.push({ headers: req.headers, body, answered });
        res.writeHead(answered).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const config = writeConfig(dir, writeFakeAgent(dir), `webhook:\n  url: ${hookUrl}\n  secret: ${secret}\n  timeout: 5s\n`);
    const env = { HOME: dir, CONDUCTOR_ROOT: '', CONDUCTOR_CONFIG: '', CONDUCTOR_PORT: '', CONDUCTOR_API_KEY: '', CONDUCTOR_DISABLE_TASK_START: '' };
    server = await startServer(CONDUCTOR, ['--host', '127.0.0.1', '--port', '0', '--root', join(dir, 'runs'), '--config', config], env, dir);
  });
  afterAll(async () => {
    await server.stop('SIGKILL');
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers a signed run_stop, retrying until the receiver accepts it (third attempt)', async () => {
    const created = await postJson(`${server.url}/api/v1/tasks`, { project_id: 'proj', task_id: 'task-20260101-000000-hook', agent_type: 'fake', prompt: 'hello' });
    expect(created.status).toBe(201);

    await waitFor('the third delivery attempt', () => deliveries.length >= 3);
    expect(deliveries.map((d) => d.answered)).toEqual([500, 500, 200]);
    expect(new Set(deliveries.map((d) => d.body)).size).toBe(1);

    const [first] = deliveries;
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers['user-agent']).toBe('conductor-loop/1.0');
    const expected = 'sha256=' + createHmac('sha256', secret).update(first.body).digest('hex');
    expect(first.headers['x-conductor-signature']).toBe(expected);

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
