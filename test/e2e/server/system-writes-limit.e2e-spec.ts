/**
 * `storage.max_message_body_bytes` limits posts, not the server's own records: with a limit far
 * below a RUN_START's size, a task still runs and completes, while a post over the limit is refused.
 * Needs `npm run build` (bin/conductor).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { RunsLayout } from '@app/storage';
import { getJson, postJson, RunningServer, startConductor, waitFor, writeConfig, writeFakeAgent } from './helpers';

describe('the configured body limit and the server own records', () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sys-limit-'));
    server = await startConductor(dir, join(dir, 'runs'), writeConfig(dir, writeFakeAgent(dir), 'storage:\n  max_message_body_bytes: 100\n'));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a task runs and completes although its RUN_START is over the limit; a post over it is refused', async () => {
    const task = 'task-20261128-120000-limit';
    expect((await postJson(`${server.url}/api/v1/tasks`, { project_id: 'p', task_id: task, agent_type: 'fake', prompt: 'hi' })).status).toBe(201);
    const bus = () => readMessages(new RunsLayout(join(dir, 'runs')).taskBus('p', task));
    await waitFor('the run to stop', () => bus().some((m) => m.type === 'RUN_STOP'), 30_000);
    await waitFor('the task to complete', async () => (await getJson(`${server.url}/api/projects/p/tasks/${task}`)).body.done === true, 30_000);
    expect(Buffer.byteLength(bus().find((m) => m.type === 'RUN_START')!.body)).toBeGreaterThan(100);
    const refused = await postJson(`${server.url}/api/projects/p/tasks/${task}/messages`, { type: 'FACT', body: 'x'.repeat(101) });
    expect(refused.status).toBe(413);
  });
});
