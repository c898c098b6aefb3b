import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo, readRunInfoReconciled, RunsLayout } from '@app/storage';
import { busMessages, cliEnv, commandAgentSandbox, COUNTED_AGENT_PRELUDE, PROJECT, processAlive, RUN_AGENT, waitFor } from '../e2e/runner/helpers';
import { cliSpawner } from '../utils/fenced-cli';
import { checkInvariant, recordTally } from './tally';
import { rng } from './fiu';

/**
 * SIGKILL at seeded random points of a task's life (issue #31): the root runner of `run-agent
 * task` is killed a random time after it was spawned, anywhere from its start (config, lock, claim,
 * run folder) through the agent's runs and the restarts between them; then `run-agent task resume
 * --adopt` finishes the task. Invariants: every bus record written before the kill is still there,
 * in order and unchanged; every run-info reads back as a whole record; no two agents ever ran at
 * once; the resumed task ends DONE with no run left `running`; the resume says what it found on the
 * bus (each run the killed runner left running: adopted, or found dead and closed). FAULT_SEED replays, FAULT_KILL_ROUNDS sets the count.
 */
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const ROUNDS = Number(process.env.FAULT_KILL_ROUNDS ?? 10);
/** The window the kill falls in: a task of three short runs takes about this long on a loaded 2-core machine. */
const WINDOW_MS = 1200;

// three starts: the first two end without DONE (restarts), the third marks the task DONE
const AGENT = `${COUNTED_AGENT_PRELUDE}sleep 0.2
n=$(wc -l < "$COUNTER_FILE")
if [ "$n" -ge 3 ]; then touch "$JRUN_TASK_FOLDER/DONE"; fi
exit 0
`;

describe('fault injection: SIGKILL of the root runner at seeded points of start, runs and restarts', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('killed', AGENT);
  const layout = new RunsLayout(tmp.root);
  const stats = { rounds: 0, faults: 0, checks: 0, violations: 0 };
  afterAll(() => recordTally({ suite: 'runner SIGKILL at seeded points', seed: SEED, cases: stats.rounds, faults: stats.faults, checks: stats.checks, violations: stats.violations }));

  function check(n: number, delay: number, what: string, ok: boolean, detail: () => string = () => ''): void {
    checkInvariant(stats, `FAULT_SEED=${SEED}, round ${n}, kill after ${delay} ms`, what, ok, detail);
  }

  const cli = cliSpawner({ runAgent: RUN_AGENT, cwd: home, env: (e) => cliEnv(home, e), trailing: [], children });

  const runInfoFiles = (taskDir: string): string[] => {
    const runs = join(taskDir, 'runs');
    return existsSync(runs) ? readdirSync(runs).map((r) => join(runs, r, 'run-info.yaml')).filter((f) => existsSync(f)) : [];
  };

  async function round(n: number, delay: number): Promise<void> {
    const task = `task-20260101-130000-kill-${SEED}-${n}`;
    const taskDir = layout.taskDir(PROJECT, task);
    const bus = layout.taskBus(PROJECT, task);
    const counter = join(base, `${task}.count`);
    const env = { COUNTER_FILE: counter };
    const scope = ['--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'killed', '--config', configPath];
    const first = cli(['task', ...scope, '--prompt', `round ${n}`, '--max-restarts', '5', '--restart-delay', '10ms'], env);
    let exited = false;
    void first.done.then(() => (exited = true));
    await new Promise((r) => setTimeout(r, delay));
    if (exited) return; // the task ended before the kill: no fault in this round
    first.child.kill('SIGKILL');
    await first.done;
    stats.faults++;
    if (!existsSync(join(taskDir, 'TASK.md'))) {
      // killed before the task existed: nothing was acknowledged; the resume refuses with one line
      const refused = await cli(['task', 'resume', ...scope], env).done;
      const lines = refused.stderr.trim().split('\n');
      check(n, delay, 'a resume of a task that never started exits 2 with one line', refused.code === 2 && lines.length === 1 && lines[0].startsWith('Error: '), () => `exit ${refused.code}: ${refused.stderr}`);
      check(n, delay, 'no agent ran', !existsSync(counter));
      return;
    }
    const before = busMessages(bus);
    const leftRunning = runInfoFiles(taskDir).map((f) => readRunInfo(f)).filter((i) => i.status === 'running').map((i) => i.run_id);

    const resumed = await cli(['task', 'resume', ...scope, '--adopt', '--max-restarts', '5', '--restart-delay', '10ms'], env).done;
    check(n, delay, 'the resume finishes the task', resumed.code === 0 && existsSync(join(taskDir, 'DONE')), () => `exit ${resumed.code}: ${resumed.stderr}`);
    const after = busMessages(bus);
    check(n, delay, 'every record written before the kill is still there, in order and unchanged', before.every((m, i) => JSON.stringify(after[i]) === JSON.stringify(m)), () => `${before.length} before, ${after.length} after`);
    const found = after.slice(before.length);
    check(n, delay, 'the resume names on the bus every run the killed runner left running (adopted or found dead)', leftRunning.every((id) => found.some((m) => m.body.includes(`run ${id} `))), () => `${leftRunning.join(',')}: ${found.map((m) => `${m.type} ${m.body}`).join(' | ')}`);
    for (const file of runInfoFiles(taskDir)) {
      let whole = true;
      try {
        readRunInfo(file);
      } catch (err) {
        whole = false;
        check(n, delay, `${file} reads back as a whole record`, false, () => (err as Error).message);
      }
      // a killed runner's run is healed by the product's reader once its agent is gone (dead
      // processes: failed, or completed by DONE; a zombie counts as exited, the one liveness rule)
      const info = await waitFor(`round ${n}: ${file} healed`, () => {
        const r = readRunInfoReconciled(file);
        return r.status !== 'running' && r;
      }, 15_000).catch(() => readRunInfoReconciled(file));
      check(n, delay, `${file} reads back whole and, read as the product reads it, is not left running`, whole && info.status !== 'running', () => `${info.status} pid ${info.pid} alive ${processAlive(info.pid)}`);
    }
    // The gate (libs/runner/src/agent-executor.ts): an agent runs only once a run record names it, so
    // a runner killed at any instruction leaves no agent the next start cannot see, and none beside the resumed one.
    const recordedPids = new Set(runInfoFiles(taskDir).map((f) => readRunInfo(f).pid));
    const ran = readFileSync(counter, 'utf8').trim().split('\n').map(Number);
    const unrecorded = ran.filter((pid) => !recordedPids.has(pid));
    check(n, delay, 'every agent that ran is named by a run record', unrecorded.length === 0, () => `agents ${unrecorded.join(', ')} ran with no run-info naming them`);
    const overlaps = existsSync(`${counter}.overlap`) ? readFileSync(`${counter}.overlap`, 'utf8').trim().split('\n') : [];
    check(n, delay, 'no two agents ever ran at once', overlaps.length === 0, () => overlaps.join('; '));
    const pids = readFileSync(counter, 'utf8').trim().split('\n').map(Number);
    await waitFor(`round ${n}: no agent left running`, () => pids.every((p) => !processAlive(p)), 10_000);
    stats.checks++;
  }

  it(`keeps every invariant across ${ROUNDS} seeded kill points (FAULT_SEED replays)`, async () => {
    const random = rng(SEED);
    for (let n = 0; n < ROUNDS; n++) {
      stats.rounds++;
      await round(n, Math.floor(random() * WINDOW_MS));
    }
    expect(stats.faults).toBeGreaterThan(0);
  }, 180_000);
});
