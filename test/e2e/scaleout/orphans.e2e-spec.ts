import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../../utils/nats-server';
import { processAlive } from '../../utils/processes';
import { clusterForFile, waitFor } from './cluster';

// Real nats-server, `conductor --nats` and two `run-agent worker` processes (lease 3 s).
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('a worker restarted on the same runs root (real nats-server)', () => {
  const c = clusterForFile(2);

  it('stops the agents its killed predecessor left running and finalises their runs, publishing nothing', async () => {
    const p = 'orphans';
    const t = 'task-20260101-000000-orph1';
    const { run_id: runId } = await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '60000' });
    const replicaInfo = join(c.server.root, p, t, 'runs', runId, 'run-info.yaml');
    await waitFor('the run replicated as running', () => existsSync(replicaInfo) && readRunInfo(replicaInfo).status === 'running' && readRunInfo(replicaInfo).pgid > 0, 60_000);
    const owner = c.workers.find((w) => existsSync(join(w.root, p, t, 'TASK.md')))!;
    const localInfo = join(owner.root, p, t, 'runs', runId, 'run-info.yaml');
    const agentPid = readRunInfo(localInfo).pid;
    await new Promise<void>((resolve) => {
      owner.child.once('exit', () => resolve());
      owner.child.kill('SIGKILL');
    });
    // its agent is a detached process group: it outlives the worker
    expect(processAlive(agentPid)).toBe(true);

    const again = c.startWorker(owner.host);
    await waitFor('the restarted worker to release the task', () => again.out.includes(`stopped the orphaned runs of ${p}/${t}`), 30_000);
    await waitFor('the orphaned agent to end', () => !processAlive(agentPid), 15_000);
    const local = readRunInfo(localInfo);
    expect(local.status).not.toBe('running');
    expect(existsSync(join(owner.root, p, t, 'runs', runId, 'STOPPED-BY'))).toBe(true);
    // the task went on from the queue (another run), and the stale copy's finalisation was not published:
    // the replica's first run is finalised by the worker that took the task over (worker host lost)
    await waitFor('the first run failed on the replica by the takeover', () => /worker host lost/.test(readRunInfo(replicaInfo).error_summary ?? '') && readRunInfo(replicaInfo), 30_000);
    expect(readRunInfo(replicaInfo).error_summary).not.toMatch(/restarted/);

    const cancel = await fetch(`${c.serverUrl}/api/v1/tasks/${t}?project_id=${p}`, { method: 'DELETE' });
    expect(cancel.status).toBe(202);
    // no agent left behind by the test
    const runsDir = join(c.server.root, p, t, 'runs');
    await waitFor('every run of the task ended', () => readdirSync(runsDir).every((r) => !existsSync(join(runsDir, r, 'run-info.yaml')) || readRunInfo(join(runsDir, r, 'run-info.yaml')).status !== 'running'), 30_000);
  });
});
