import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBus } from '@app/messagebus';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../utils/nats-server';
import { Cluster, completionFacts, Proc, replicaDiff, taskDone, waitFor } from '../e2e/scaleout/cluster';
import { rng } from './fiu';
import { markedProcesses, MARK } from './merge-kill-helpers';
import { checkInvariant, recordTally } from './tally';

/**
 * SIGKILL during a scale-out takeover (issue #31): real nats-server, `conductor --nats` and three
 * `run-agent worker` processes (lease 3 s). The worker running a task is SIGKILLed; once another
 * worker starts taking the task over (its copy of the task appears: claim, replay, orphan runs),
 * that heir is SIGKILLed too a seeded 0–800 ms later. Killed workers restart on their runs roots.
 * Invariants: the task ends DONE on the replica with one completion fact, no run left `running`,
 * no bus record twice, the replica byte-identical to the last owner's copy, and no agent of the
 * task outlives it. FAULT_SEED replays, FAULT_TAKEOVER_ROUNDS sets the count.
 */
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const ROUNDS = Number(process.env.FAULT_TAKEOVER_ROUNDS ?? 2);
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('fault injection: SIGKILL of the heir during a scale-out takeover (real nats-server)', () => {
  const c = new Cluster();
  const stats = { cases: 0, faults: 0, checks: 0, violations: 0 };
  beforeAll(() => c.start(3), 120_000);
  afterAll(async () => {
    recordTally({ suite: 'scale-out takeover SIGKILL at seeded points', seed: SEED, cases: stats.cases, faults: stats.faults, checks: stats.checks, violations: stats.violations });
    await c.dispose();
  });

  const live = () => c.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  const holds = (w: Proc, p: string, t: string) => existsSync(join(w.root, p, t));
  async function kill(w: Proc): Promise<void> {
    const exited = new Promise((r) => w.child.once('exit', r));
    w.child.kill('SIGKILL');
    await exited;
    stats.faults++;
  }
  /** A killed worker comes back on its runs root (it stops what its predecessor left running). */
  function restart(w: Proc): void {
    c.workers.splice(c.workers.indexOf(w), 1);
    c.startWorker(w.host);
  }

  it(`keeps every invariant across ${ROUNDS} seeded kills of the heir (FAULT_SEED replays)`, async () => {
    const random = rng(SEED);
    for (let n = 0; n < ROUNDS; n++) {
      stats.cases++;
      const delay = Math.floor(random() * 800);
      const context = `FAULT_SEED=${SEED}, round ${n}: heir killed ${delay} ms into the takeover`;
      const check = (what: string, ok: boolean, detail?: () => string) => checkInvariant(stats, context, what, ok, detail);
      const p = `takeover-kill-${n}`;
      const t = `task-20260101-000000-tkk${n}`;
      const mark = `takeover-${SEED}-${n}`;
      const { run_id: runId } = await c.submit(p, t, { FAKE_AGENT_SLEEP_MS: '4000', [MARK]: mark });
      const info = join(c.server.root, p, t, 'runs', runId, 'run-info.yaml');
      await waitFor('the run replicated as running', () => existsSync(info) && readRunInfo(info).status === 'running' && !readRunInfo(info).starting, 60_000);
      const owner = live().find((w) => holds(w, p, t))!;
      check('the process scan sees the running agent', markedProcesses(mark).length > 0);
      await kill(owner);
      const heir = await waitFor('a worker to start taking the task over', () => live().find((w) => w !== owner && holds(w, p, t)), 60_000);
      await new Promise((r) => setTimeout(r, delay));
      await kill(heir);
      restart(owner);
      restart(heir);

      await waitFor(`${p}/${t} DONE on the replica`, () => taskDone(c.server.root, p, t), 90_000).catch(() => undefined);
      check('the task ends DONE on the replica', taskDone(c.server.root, p, t), () => c.workers.map((w) => `--- ${w.host}\n${w.out.split('\n').slice(-15).join('\n')}`).join('\n'));
      check('one completion fact', completionFacts(c.server.root, p, t) === 1, () => String(completionFacts(c.server.root, p, t)));
      const runs = join(c.server.root, p, t, 'runs');
      const runInfos = () => readdirSync(runs).map((r) => join(runs, r, 'run-info.yaml')).filter((f) => existsSync(f)).map((f) => readRunInfo(f));
      const statuses = await waitFor('every run on the replica to end', () => runInfos().every((i) => i.status !== 'running') && runInfos(), 20_000).catch(() => runInfos());
      check('no run is left running on the replica', statuses.every((i) => i.status !== 'running'), () => statuses.map((i) => `${i.run_id} ${i.status}`).join(', '));
      const ids = parseBus(readFileSync(join(c.server.root, p, t, 'TASK-MESSAGE-BUS.md'))).map((m) => m.msg_id);
      check('no bus record twice on the replica', new Set(ids).size === ids.length);
      const last = c.workers.filter((w) => holds(w, p, t) && existsSync(join(w.root, p, t, 'DONE')));
      // Every file of the last owner's copy is on the replica, including what a killed process of that worker wrote
      // and never published (its orphan stop's STOPPED-BY, a run it had begun): a takeover adopts only what
      // the stream holds, and the worker publishes the rest (ChangeTailer.adopt)
      const diffs = await waitFor('the replica to match the last owner', () => last.find((w) => replicaDiff(w.root, c.server.root, p).length === 0) && [], 20_000).catch(() => last.map((w) => `${w.host}: ${replicaDiff(w.root, c.server.root, p).join(', ')}`));
      check('the replica matches the copy of the worker that finished the task', last.length > 0 && diffs.length === 0, () => diffs.join('; '));
      const left = await waitFor('no agent of the task left', () => markedProcesses(mark).length === 0 && [], 20_000).catch(() => markedProcesses(mark));
      check('no agent of the task outlives it', left.length === 0, () => left.join('; '));
    }
    expect(stats.faults).toBe(2 * ROUNDS);
  }, 300_000);
});
