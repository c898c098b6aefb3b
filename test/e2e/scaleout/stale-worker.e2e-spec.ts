import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../../utils/nats-server';
import { clusterForFile, replicaDiff, taskDone, waitFor } from './cluster';

// Real nats-server, `conductor --nats` and two `run-agent worker` processes (lease 3 s), issue #31:
// a worker SIGSTOPped past its lease loses its task to the other worker (a newer claim in
// CONDUCTOR_CLAIMS: a newer owner epoch). Woken, its late change reaches the change stream with its
// old epoch and the replica drops it; the worker notices the newer claim and stops its copy.
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('a stale worker (real nats-server)', () => {
  const c = clusterForFile(2);

  it('a change of a worker that lost its task to a newer claim is dropped by the replica', async () => {
    const p = 'fenced';
    const t = 'task-20260101-000000-stale1';
    const { run_id: runId } = await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '6000' });
    const infoFile = join(c.server.root, p, t, 'runs', runId, 'run-info.yaml');
    await waitFor('the run replicated as running', () => existsSync(infoFile) && readRunInfo(infoFile).status === 'running', 60_000);
    const stale = c.workers.find((w) => existsSync(join(w.root, p, t, 'TASK.md')))!;
    const heir = c.workers.find((w) => w !== stale)!;

    stale.child.kill('SIGSTOP');
    let late: string;
    try {
      await waitFor('the other worker to take the task over', () => heir.out.includes(`took over ${p}/${t}`), 60_000);
      await waitFor('the heir’s run on the replica', () => readdirSync(join(c.server.root, p, t, 'runs')).length >= 2, 60_000);
      // a write the paused worker's process makes when it wakes (here: made for it while it sleeps)
      late = join(stale.root, p, t, 'LATE-WRITE.txt');
      writeFileSync(late, 'written by a worker that lost the task\n');
    } finally {
      stale.child.kill('SIGCONT');
    }
    await waitFor('the woken worker to notice the newer claim', () => stale.out.includes(`lost task ${p}/${t} to host ${heir.host}`), 30_000);
    // the late record reached the replica consumer: dropped (or, without the fence, applied)
    const replicaLate = join(c.server.root, p, t, 'LATE-WRITE.txt');
    const dropped = new RegExp(`record \\d+ \\(put ${p}/${t}/LATE-WRITE\\.txt\\) of host ${stale.host} dropped: stale owner epoch \\d+, the task was claimed since`);
    await waitFor('the late record handled by the replica', () => dropped.test(c.server.out) || existsSync(replicaLate), 30_000);
    expect(existsSync(replicaLate)).toBe(false);
    expect(c.server.out).toMatch(dropped);

    await waitFor('the heir to finish the task', () => taskDone(heir.root, p, t) && existsSync(join(c.server.root, p, t, 'DONE')), 60_000);
    await waitFor('the replica to match the heir', () => replicaDiff(heir.root, c.server.root, p).length === 0, 20_000).catch(() => undefined);
    // nothing the stale worker wrote after the takeover (its run's end, its stop) replaced the heir's files
    expect(replicaDiff(heir.root, c.server.root, p)).toEqual([]);
    expect(readRunInfo(infoFile).status).toBe('failed');
  });
});
