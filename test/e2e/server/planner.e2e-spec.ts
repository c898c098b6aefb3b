/**
 * The root-task planner through the real server: max_concurrent_root_tasks: 1, tasks created with
 * POST /api/v1/tasks, a fake agent that holds its slot until the test releases it, and a server
 * restart in the middle. Needs `npx nest build api && npx nest build cli`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { postJson, RunningServer, startConductor, waitFor, writeConfig, writeFakeAgent } from './helpers';

describe('root-task planner (e2e)', () => {
  let dir: string;
  let root: string;
  let config: string;
  let server: RunningServer | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'planner-e2e-'));
    root = join(dir, 'runs');
    // the extra line continues the `defaults:` block written last by writeConfig
    config = writeConfig(dir, writeFakeAgent(dir), '  max_concurrent_root_tasks: 1\n');
  });
  afterAll(async () => {
    for (const t of ['a', 'b', 'c']) writeFileSync(release(t), '');
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const release = (t: string) => join(dir, `release-${t}`);
  const taskId = (t: string) => `task-20260101-000000-plan${t}`;
  const statePath = () => join(root, '.conductor', 'root-task-planner.yaml');
  const state = () => parse(readFileSync(statePath(), 'utf8')) as { limit: number; entries: { task_id: string; state: string; run_id: string }[] };
  const runInfo = (t: string, runId: string) => join(root, 'proj', taskId(t), 'runs', runId, 'run-info.yaml');
  const statusOf = (t: string, runId: string) => (existsSync(runInfo(t, runId)) ? /^status: (\S+)$/m.exec(readFileSync(runInfo(t, runId), 'utf8'))?.[1] : undefined);

  async function start(): Promise<RunningServer> {
    return startConductor(dir, root, config);
  }

  function create(t: string) {
    return postJson(`${server!.url}/api/v1/tasks`, {
      project_id: 'proj',
      task_id: taskId(t),
      agent_type: 'fake',
      prompt: `task ${t}`,
      config: { RELEASE_FILE: release(t) },
    });
  }

  it('queues beyond the limit, starts the next task when one ends, and recovers the queue after a restart', async () => {
    server = await start();

    const a = await create('a');
    expect(a).toMatchObject({ status: 201, body: { status: 'started', task_id: taskId('a') } });
    expect(a.body.queue_position).toBeUndefined();
    const b = await create('b');
    expect(b).toMatchObject({ status: 201, body: { status: 'queued', queue_position: 1 } });
    const c = await create('c');
    expect(c).toMatchObject({ status: 201, body: { status: 'queued', queue_position: 2 } });

    expect(state().limit).toBe(1);
    expect(state().entries.map((e) => [e.task_id, e.state])).toEqual([
      [taskId('a'), 'running'],
      [taskId('b'), 'queued'],
      [taskId('c'), 'queued'],
    ]);
    await waitFor('task a to run', () => statusOf('a', a.body.run_id) === 'running');
    expect(statusOf('b', b.body.run_id)).toBeUndefined();

    // a ends → b takes the slot, c stays queued
    writeFileSync(release('a'), '');
    await waitFor('task b to run', () => statusOf('b', b.body.run_id) === 'running');
    expect(statusOf('a', a.body.run_id)).toBe('completed');
    expect(state().entries.filter((e) => e.state === 'queued').map((e) => e.task_id)).toEqual([taskId('c')]);

    // the server goes away with c still queued; b's agent finishes on its own meanwhile
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(state().entries.find((e) => e.task_id === taskId('c'))?.state).toBe('queued');
    writeFileSync(release('b'), '');
    writeFileSync(release('c'), '');
    await waitFor('task b agent to finish', () => existsSync(join(root, 'proj', taskId('b'), 'DONE')));

    // a new server recovers the queue and launches c
    server = await start();
    await waitFor('task c to complete after the restart', () => statusOf('c', c.body.run_id) === 'completed');
    await waitFor('the planner queue to drain', () => state().entries.length === 0);
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
