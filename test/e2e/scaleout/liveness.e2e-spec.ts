import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectNats } from '@app/scaleout';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../../utils/nats-server';
import { processAlive } from '../../utils/processes';
import { clusterForFile, waitFor } from './cluster';

// Real nats-server, `conductor --nats` and one `run-agent worker` (lease 3 s).
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('SSE and REST liveness of a run owned by a worker (real nats-server)', () => {
  const c = clusterForFile(1);

  it('reports the run failed once its worker stops heartbeating, although its pid is alive on this machine', async () => {
    const p = 'live';
    const t = 'task-20260101-000000-hb01';
    const { run_id: runId } = await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '120000' });
    const infoFile = join(c.server.root, p, t, 'runs', runId, 'run-info.yaml');
    const info = await waitFor('the run replicated as running', () => existsSync(infoFile) && readRunInfo(infoFile).status === 'running' && readRunInfo(infoFile).pgid > 0 && readRunInfo(infoFile), 60_000);

    const get = async (path: string) => JSON.stringify(await (await fetch(`${c.serverUrl}${path}`)).json());
    const restViews = async () => ({
      taskRuns: await get(`/api/projects/${p}/tasks/${t}/runs`),
      flat: await get(`/api/projects/${p}/runs/flat`),
      run: await get(`/api/v1/runs/${runId}`),
      taskRun: await get(`/api/projects/${p}/tasks/${t}/runs/${runId}`),
    });
    const abort = new AbortController();
    let sse = '';
    void fetch(`${c.serverUrl}/api/v1/runs/${runId}/stream`, { signal: abort.signal })
      .then(async (res) => {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) sse += Buffer.from(chunk).toString('utf8');
      })
      .catch(() => undefined);
    try {
      await waitFor('the SSE status running', () => /event: status\ndata: .*"status":"running"/.test(sse), 15_000);
      // the worker's heartbeat lists the task (seen on NATS, as the server sees it)
      const link = await connectNats(c.nats.url, 'test-observer');
      try {
        const sub = link.nc.subscribe('conductor.heartbeat.w1');
        for await (const m of sub) if ((m.json() as { tasks: string[] }).tasks.includes(`${p}/${t}`)) break;
      } finally {
        await link.close();
      }
      expect(sse).not.toMatch(/"status":"failed"/);
      const worker = c.workers[0];

      // a silent worker (paused: no heartbeats) while its agent process lives on this machine
      worker.child.kill('SIGSTOP');
      try {
        await waitFor('the SSE status failed after the lease', () => /event: status\ndata: .*"status":"failed"/.test(sse), 30_000);
        // a pid probe here would have said alive: the agent still runs
        expect(processAlive(info.pid)).toBe(true);
        // the REST views judge it the same way: run lists, flat runs, the run, the task
        const rest = await restViews();
        for (const [what, body] of Object.entries(rest)) {
          expect([what, body]).toEqual([what, expect.stringMatching(/"status":"failed"/)]);
          expect([what, body]).toEqual([what, expect.not.stringMatching(/"status":"running"/)]);
        }
        // and the replica was not rewritten by the server: it still holds the worker's last word
        expect(readRunInfo(infoFile).status).toBe('running');
        expect(readFileSync(infoFile, 'utf8')).not.toMatch(/failed/);
      } finally {
        worker.child.kill('SIGCONT');
      }
      // heartbeats again: running again
      const failedAt = sse.lastIndexOf('"status":"failed"');
      await waitFor('the SSE status running again', () => /"status":"running"/.test(sse.slice(failedAt)), 30_000);
      await waitFor('the REST views running again', async () => Object.values(await restViews()).every((b) => /"status":"running"/.test(b)), 30_000);
      expect(readdirSync(join(c.server.root, p, t, 'runs'))).toEqual([runId]);
    } finally {
      abort.abort();
    }
  });
});
