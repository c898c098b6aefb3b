import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectNats, TASKS_STREAM } from '@app/scaleout';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../../utils/nats-server';
import { Cluster, completionFacts, ownersOf, taskDone, waitFor } from './cluster';

// #30 defect 8: a task delivered again while the worker that runs it is alive must not run twice.
// A nats-server outage longer than the lease (the workers run with --lease 3s) made
// JetStream redeliver every task still running (the in-progress acks of a delivery are not kept
// across a restart): another worker "took over" tasks whose worker was alive, so they ran twice
// and a run that completed was recorded failed (worker host lost).
const describeNats = natsServerAvailable() ? describe : describe.skip;
const id = (i: number) => `task-20260101-000000-n${String(i).padStart(2, '0')}`;
const LEASE_MS = 3000;

function runStatuses(root: string, p: string, t: string): string[] {
  const runs = join(root, p, t, 'runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs)
    .filter((r) => existsSync(join(runs, r, 'run-info.yaml')))
    .map((r) => readRunInfo(join(runs, r, 'run-info.yaml')).status);
}

describeNats('scale-out: nats-server restarted for longer than the lease', () => {
  const c = new Cluster();
  jest.setTimeout(180_000);
  beforeAll(() => c.start(2));
  afterAll(() => c.dispose());

  it('runs every task once: a live worker keeps its tasks, none is taken over', async () => {
    const p = 'outage';
    const tasks = Array.from({ length: 6 }, (_, i) => id(i));
    // long enough to outlive the outage below (its end is an event: every task still running)
    for (const t of tasks) await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '15000' });
    const running = (t: string) => c.workers.some((w) => runStatuses(w.root, p, t).includes('running'));
    await waitFor('all 6 tasks running on the workers', () => tasks.every(running), 60_000);

    await c.nats.stop('SIGKILL');
    // the fault itself: NATS stays down for more than one lease (no worker can send a heartbeat)
    const downAt = Date.now();
    await waitFor('an outage longer than the lease', () => Date.now() - downAt > 2 * LEASE_MS + 1000, 15_000);
    await c.nats.start();

    await waitFor('all tasks DONE in the replica', () => tasks.every((t) => taskDone(c.server.root, p, t)), 120_000);
    await waitFor('no run left running on the workers', () => tasks.every((t) => !running(t)), 30_000);
    for (const t of tasks) {
      expect({ t, owners: ownersOf(c, p, t) }).toEqual({ t, owners: [expect.any(String)] });
      expect({ t, facts: completionFacts(c.server.root, p, t) }).toEqual({ t, facts: 1 });
      expect({ t, runs: runStatuses(c.server.root, p, t) }).toEqual({ t, runs: ['completed'] });
    }
    for (const w of c.workers) expect(w.out).not.toMatch(/took over/);
  });
});

describeNats('scale-out: a task delivered again while its worker runs it', () => {
  const c = new Cluster();
  jest.setTimeout(180_000);
  beforeAll(() => c.start(1));
  afterAll(() => c.dispose());

  it('is left to the live worker that claimed it: one run, completed, one completion fact', async () => {
    const p = 'again';
    const t = 'task-20260101-000000-again';
    await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '8000' });
    const w1 = c.workers[0];
    await waitFor('the task running on w1', () => runStatuses(w1.root, p, t).includes('running'), 60_000);
    // w1 at its capacity (4) stops pulling: the message below can only go to w2
    const fillers = [1, 2, 3].map((i) => `task-20260101-000000-fill${i}`);
    for (const f of fillers) await c.submit('fill', f, { FAKE_AGENT_SLEEP_MS: '8000' });
    await waitFor('w1 at capacity', () => fillers.every((f) => runStatuses(w1.root, 'fill', f).includes('running')), 60_000);
    // the same task message once more (what JetStream hands out when it redelivers)
    const w2 = c.startWorker('w2');
    await waitFor('w2 to pull', () => w2.out.includes('pulling from'), 30_000);
    const link = await connectNats(c.nats.url, 'test-redeliver');
    try {
      const queued = await link.jsm.streams.getMessage(TASKS_STREAM, { last_by_subj: `conductor.tasks.${p}` });
      expect(queued).not.toBeNull();
      await link.js.publish(queued!.subject, queued!.data, { msgID: 'again-duplicate' });
    } finally {
      await link.close();
    }
    await waitFor('w2 to leave the task to w1', () => /is running on w1: left to it/.test(w2.out), 30_000);
    await waitFor('the task DONE in the replica', () => taskDone(c.server.root, p, t), 60_000);
    // DONE can reach the replica before the run's final run-info does: wait for the run to end there
    await waitFor('the run to end in the replica', () => !runStatuses(c.server.root, p, t).includes('running'), 30_000);
    expect(runStatuses(c.server.root, p, t)).toEqual(['completed']);
    expect(completionFacts(c.server.root, p, t)).toBe(1);
    expect(runStatuses(w1.root, p, t)).toEqual(['completed']);
  });
});
