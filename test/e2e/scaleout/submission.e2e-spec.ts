import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../../utils/nats-server';
import { clusterForFile, replicaDiff, waitFor } from './cluster';

// Real nats-server, `conductor --nats` and `run-agent worker` processes: a task created through
// the server's API is created by the worker that takes it; the server writes nothing into its
// replica and still answers a GET right after the POST.
const describeNats = natsServerAvailable() ? describe : describe.skip;

interface V1Task {
  status: string;
  depends_on?: string[];
  blocked_by?: string[];
}

describeNats('a new task is created by its worker, not on the server (real nats-server)', () => {
  // no worker at first: the submission waits in the queue, so the replica can be looked at before any worker acts
  const c = clusterForFile(0);

  const post = (body: Record<string, unknown>) =>
    fetch(`${c.serverUrl}/api/v1/tasks`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_type: 'codex', ...body }) });
  const get = async (p: string, t: string): Promise<{ status: number; body: V1Task }> => {
    const res = await fetch(`${c.serverUrl}/api/v1/tasks/${t}?project_id=${p}`);
    return { status: res.status, body: (await res.json()) as V1Task };
  };

  it('queued with nothing in the replica, listed at once, then written by the worker with its settings and depends_on', async () => {
    const p = 'submit';
    const [first, second] = ['task-20260101-000000-subm1', 'task-20260101-000000-subm2'];
    const res = await post({ project_id: p, task_id: first, prompt: 'first\n', max_tokens: 5000 });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { run_id: string; status: string };
    expect(created.status).toBe('started');
    // nothing on the server's runs root: no task folder, no run folder
    expect(existsSync(join(c.server.root, p))).toBe(false);
    const shown = await get(p, first);
    expect(shown.status).toBe(200);
    expect(shown.body.status).toBe('queued');
    const list = (await (await fetch(`${c.serverUrl}/api/v1/tasks`)).json()) as { items?: { task_id: string }[] } | { task_id: string }[];
    expect(JSON.stringify(list)).toContain(first);

    // depends on the first: held on the server (blocked), not queued
    const dep = await post({ project_id: p, task_id: second, prompt: 'second\n', depends_on: [first] });
    expect(dep.status).toBe(201);
    expect(((await dep.json()) as { status: string }).status).toBe('queued');
    expect(await get(p, second)).toMatchObject({ status: 200, body: { status: 'blocked', depends_on: [first], blocked_by: [first] } });
    expect(existsSync(join(c.server.root, p))).toBe(false);

    const w1 = c.startWorker('w1');
    const w2 = c.startWorker('w2');
    await waitFor('DONE of the first task on the replica', () => existsSync(join(c.server.root, p, first, 'DONE')), 60_000);
    await waitFor('DONE of the dependent task on the replica', () => existsSync(join(c.server.root, p, second, 'DONE')), 60_000);
    const ownerOf = (t: string) => [w1, w2].find((w) => existsSync(join(w.root, p, t, 'TASK.md')))!;
    const firstOwner = ownerOf(first);
    const secondOwner = ownerOf(second);
    // the worker wrote the files from the submission, with the run id the API answered
    expect(readdirSync(join(firstOwner.root, p, first, 'runs'))).toEqual([created.run_id]);
    expect(readFileSync(join(firstOwner.root, p, first, 'TASK.md'), 'utf8')).toBe('first\n');
    expect(readFileSync(join(firstOwner.root, p, first, 'TASK-SETTINGS.yaml'), 'utf8')).toBe('max_tokens: 5000\n');
    expect(readFileSync(join(secondOwner.root, p, second, 'TASK-CONFIG.yaml'), 'utf8')).toContain(first);
    // the dependent run started after the first had finished
    const info = (w: { root: string }, t: string) => readRunInfo(join(w.root, p, t, 'runs', readdirSync(join(w.root, p, t, 'runs'))[0], 'run-info.yaml'));
    expect(info(secondOwner, second).start_time.getTime()).toBeGreaterThanOrEqual(info(firstOwner, first).end_time.getTime());
    for (const w of [firstOwner, secondOwner]) {
      await waitFor(`the replica to match ${w.host}`, () => replicaDiff(w.root, c.server.root, p).length === 0, 20_000).catch(() => undefined);
      expect(replicaDiff(w.root, c.server.root, p)).toEqual([]);
    }
    expect(c.server.out).not.toMatch(/diverged/);
    expect(await get(p, second)).toMatchObject({ status: 200, body: { status: 'all_finished', depends_on: [first] } });
  });

  it('refuses process_import with --nats (the process would be on the server host), nothing written', async () => {
    const res = await post({ project_id: 'submit', task_id: 'task-20260101-000000-impt1', prompt: 'x\n', process_import: { pid: process.pid, stdout_path: '/dev/null' } });
    expect(res.status).toBe(501);
    expect(existsSync(join(c.server.root, 'submit', 'task-20260101-000000-impt1'))).toBe(false);
  });
});
