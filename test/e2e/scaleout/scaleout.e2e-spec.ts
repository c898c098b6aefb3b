import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBus } from '@app/messagebus';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../../utils/nats-server';
import { Cluster, completionFacts, ownersOf, projectBusIds, projectFiles, replicaDiff, taskDone, tasksIn, waitFor } from './cluster';

// Real nats-server (Debian package; .ci/run installs it), real conductor and worker processes.
const describeNats = natsServerAvailable() ? describe : describe.skip;
const id = (prefix: string, i: number) => `task-20260101-000000-${prefix}${String(i).padStart(2, '0')}`;

describeNats('scale-out over NATS JetStream (server + 3 workers)', () => {
  const c = new Cluster();
  jest.setTimeout(120_000);

  beforeAll(async () => {
    await c.start(3);
  });
  afterAll(async () => {
    await c.dispose();
  });

  it('spreads 30 tasks over the workers; each is DONE once and the replica is byte-identical', async () => {
    const p = 'fleet';
    const tasks = Array.from({ length: 30 }, (_, i) => id('a', i));
    for (const t of tasks) await c.submit(p, t);
    const replica = c.server.root;
    await waitFor('all 30 tasks DONE in the replica', () => tasks.every((t) => taskDone(replica, p, t)), 60_000);
    await waitFor('the replica to match every worker', () => c.workers.every((w) => replicaDiff(w.root, replica, p).length === 0), 20_000).catch(() => undefined); // the assertion below shows the difference

    for (const w of c.workers) {
      expect(replicaDiff(w.root, replica, p)).toEqual([]);
      expect(tasksIn(w.root, p).length).toBeGreaterThan(0);
    }
    for (const t of tasks) {
      expect(ownersOf(c, p, t)).toHaveLength(1);
      const runs = readdirSync(join(replica, p, t, 'runs'));
      expect(runs).toHaveLength(1);
      expect(readRunInfo(join(replica, p, t, 'runs', runs[0], 'run-info.yaml')).status).toBe('completed');
      expect(completionFacts(replica, p, t)).toBe(1);
    }
    // the project bus is merged from three hosts: every worker's messages, each once
    const ids = projectBusIds(replica, p);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(c.workers.flatMap((w) => projectBusIds(w.root, p)).sort());
  });

  it('routes stop, cancel and resume from the server to the worker that owns the task', async () => {
    const p = 'control';
    const [stopT, cancelT] = [id('s', 0), id('c', 0)];
    const replica = c.server.root;
    const long = { FAKE_AGENT_SLEEP_MS: '60000' };
    const stopRun = (await c.submit(p, stopT, long)).run_id;
    await c.submit(p, cancelT, long);
    const running = (t: string, r?: string) => {
      const runs = join(replica, p, t, 'runs');
      if (!existsSync(runs)) return false;
      return readdirSync(runs).some((d) => (!r || d === r) && existsSync(join(runs, d, 'run-info.yaml')) && readRunInfo(join(runs, d, 'run-info.yaml')).status === 'running');
    };
    await waitFor('both agents running (seen on the replica)', () => running(stopT, stopRun) && running(cancelT));

    const stop = await fetch(`${c.serverUrl}/api/v1/runs/${stopRun}/stop`, { method: 'POST' });
    expect(stop.status).toBe(202);
    const cancel = await fetch(`${c.serverUrl}/api/v1/tasks/${cancelT}?project_id=${p}`, { method: 'DELETE' });
    expect(cancel.status).toBe(202);

    const bus = (t: string) => readFileSync(join(replica, p, t, 'TASK-MESSAGE-BUS.md'), 'utf8');
    await waitFor('the stopped task to end its loop', () => /task stopped: run \S+ was stopped by api/.test(bus(stopT)), 30_000);
    // a cancel writes DONE and stops the tree: the task ends stopped, not completed (#30 item 2)
    await waitFor('the cancelled task to end stopped', () => existsSync(join(replica, p, cancelT, 'DONE')) && /task stopped: [^\n]*not restarting/.test(bus(cancelT)), 30_000);
    // the loop's message and the run's final record replicate separately: wait for both records
    await waitFor('no run of either task running on the replica', () => !running(stopT) && !running(cancelT), 15_000);
    const owner = c.workers.find((w) => existsSync(join(w.root, p, cancelT, 'DONE')));
    expect(owner).toBeDefined();
    await waitFor('the owner and the replica to match', () => replicaDiff(owner!.root, replica, p).length === 0, 20_000).catch(() => undefined);
    for (const root of [owner!.root, replica]) {
      expect(readFileSync(join(root, p, cancelT, 'TASK-MESSAGE-BUS.md'), 'utf8')).not.toMatch(/task completed|completion facts/);
      expect(completionFacts(root, p, cancelT)).toBe(0);
    }
    // resume removes DONE on the owning worker (and the removal replicates back)
    const resume = await fetch(`${c.serverUrl}/api/projects/${p}/tasks/${cancelT}/resume`, { method: 'POST' });
    expect(resume.status).toBe(200);
    await waitFor('DONE removed on the owning worker', () => !existsSync(join(owner!.root, p, cancelT, 'DONE')), 15_000);
    // the server does not write its replica: the removal comes back through replication
    await waitFor('DONE removed on the replica', () => !existsSync(join(replica, p, cancelT, 'DONE')), 15_000);
    await waitFor('the replica to match', () => c.workers.every((w) => replicaDiff(w.root, replica, p).length === 0), 20_000).catch(() => undefined);
    for (const w of c.workers) expect(replicaDiff(w.root, replica, p)).toEqual([]);
  });

  it('moves the tasks of a SIGKILLed worker to another worker; nothing lost or doubled', async () => {
    const p = 'kill';
    const tasks = Array.from({ length: 6 }, (_, i) => id('k', i));
    for (const t of tasks) await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '2500' });
    const replica = c.server.root;
    const victim = await waitFor('a worker running a task', () => c.workers.find((w) => tasksIn(w.root, p).length > 0));
    const victimTasks = tasksIn(victim.root, p);
    await waitFor('its run to be replicated as running', () =>
      victimTasks.some((t) => {
        const runs = join(replica, p, t, 'runs');
        return existsSync(runs) && readdirSync(runs).some((r) => existsSync(join(runs, r, 'run-info.yaml')) && readRunInfo(join(runs, r, 'run-info.yaml')).status === 'running');
      }),
    );
    // runs replicated as running when the host dies must show up as lost on the replica
    const replicatedRunning = victimTasks.filter((t) => {
      const runs = join(replica, p, t, 'runs');
      return existsSync(runs) && readdirSync(runs).some((r) => existsSync(join(runs, r, 'run-info.yaml')) && readRunInfo(join(runs, r, 'run-info.yaml')).status === 'running');
    });
    victim.child.kill('SIGKILL');
    const survivors = c.workers.filter((w) => w !== victim);

    await waitFor('all tasks DONE in the replica', () => tasks.every((t) => taskDone(replica, p, t)), 60_000);
    await waitFor('the replica to match the survivors', () => survivors.every((w) => replicaDiff(w.root, replica, p).length === 0), 20_000).catch(() => undefined); // the assertion below shows the difference
    for (const t of victimTasks) {
      expect(survivors.some((w) => existsSync(join(w.root, p, t, 'DONE')))).toBe(true);
    }
    for (const t of tasks) {
      expect(completionFacts(replica, p, t)).toBe(1);
      const msgs = parseBus(readFileSync(join(replica, p, t, 'TASK-MESSAGE-BUS.md')));
      expect(new Set(msgs.map((m) => m.msg_id)).size).toBe(msgs.length);
      const infos = readdirSync(join(replica, p, t, 'runs'))
        .filter((r) => existsSync(join(replica, p, t, 'runs', r, 'run-info.yaml')))
        .map((r) => readRunInfo(join(replica, p, t, 'runs', r, 'run-info.yaml')));
      expect(infos.filter((i) => i.status === 'running')).toEqual([]);
      if (replicatedRunning.includes(t)) expect(infos.some((i) => /worker host lost/.test(i.error_summary ?? ''))).toBe(true);
    }
    for (const w of survivors) expect(replicaDiff(w.root, replica, p)).toEqual([]);
    c.workers = survivors;
  });

  it('survives a nats-server restart mid-run: workers and server reconnect, nothing lost', async () => {
    const p = 'restart';
    const tasks = Array.from({ length: 6 }, (_, i) => id('r', i));
    for (const t of tasks) await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '1500', FAKE_AGENT_LINES: '5', FAKE_AGENT_LINE_INTERVAL_MS: '300' });
    const replica = c.server.root;
    await waitFor('a task to be running', () => c.workers.some((w) => tasksIn(w.root, p).length > 0));
    // The outage lasts until the workers have written something NATS has not seen (not a fixed time).
    const sizes = (root: string) => [...projectFiles(root, p)].map(([f, data]) => `${f}:${data.length}`).sort().join('\n');
    const before = c.workers.map((w) => sizes(w.root));
    await c.nats.stop();
    await waitFor('a worker to write while nats-server is down', () => c.workers.some((w, i) => sizes(w.root) !== before[i]));
    await c.nats.start();

    await waitFor('all tasks DONE in the replica', () => tasks.every((t) => taskDone(replica, p, t)), 60_000);
    await waitFor('the replica to match the workers', () => c.workers.every((w) => replicaDiff(w.root, replica, p).length === 0), 20_000).catch(() => undefined); // the assertion below shows the difference
    for (const w of c.workers) expect(replicaDiff(w.root, replica, p)).toEqual([]);
    for (const t of tasks) {
      expect(ownersOf(c, p, t)).toHaveLength(1);
      expect(completionFacts(replica, p, t)).toBe(1);
      expect(readdirSync(join(replica, p, t, 'runs'))).toHaveLength(1);
    }
  });
});
