import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRunInfo, readRunInfoReconciled, RunsLayout } from '@app/storage';
import { COUNTED_AGENT_PRELUDE } from '../e2e/runner/helpers';
import { RUN_AGENT, runCli } from '../utils/cli';
import { processAlive, ZOMBIE_AWARE_PROBE } from '../utils/processes';
import { exitOf, waitFor } from '../utils/wait';
import { rng } from './fiu';
import { checkInvariant, recordTally } from './tally';

/**
 * Issue #33's task supervisor under SIGKILL at seeded points (issue #31's method): a case starts
 * TASKS `run-agent task` clients with RUN_AGENT_SUPERVISOR=1 (one supervisor), waits a random
 * 0–600 ms after the supervisor listens (tasks starting, agents running) and SIGKILLs the
 * supervisor or one client. Recovery is the product's own
 * `run-agent task --adopt` of every task, again through a supervisor. Invariants: no two agents of
 * a task ever run at once (each agent checks at its start); every agent that ran is named by a run
 * record; after the recovery every task is DONE, no run reads as running and no agent is left; a
 * client whose task was cut says so and exits non-zero, never 0.
 * FAULT_SEED replays a run; FAULT_SUPERVISOR_CASES scales it (default 6).
 */
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const CASES = Number(process.env.FAULT_SUPERVISOR_CASES ?? 6);
const TASKS = 4;
const PROJECT = 'sup';

/** A counted agent (its pid in `agents` of its task folder, overlaps in `agents.overlap`) that waits for GO. */
const AGENT = `${COUNTED_AGENT_PRELUDE}while [ ! -e "$JRUN_TASK_FOLDER/GO" ]; do sleep 0.05; done
touch "$JRUN_TASK_FOLDER/DONE"
`;

type Target = 'supervisor' | 'client';

describe('task supervisor: SIGKILL of the supervisor or a client at seeded points', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sup-kills-'));
  const root = join(dir, 'runs');
  const home = join(dir, 'home');
  const config = join(dir, 'config.yaml');
  const layout = new RunsLayout(root);
  const stats = { cases: 0, faults: 0, checks: 0, violations: 0 };
  const children: ChildProcess[] = [];
  const supervisors = new Set<number>();
  const random = rng(SEED);

  beforeAll(() => {
    mkdirSync(home, { recursive: true });
    writeFileSync(join(dir, 'agent'), AGENT);
    chmodSync(join(dir, 'agent'), 0o755);
    writeFileSync(config, `agents:\n  held:\n    type: command\n    command: ${join(dir, 'agent')}\n`);
  });
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const pid of supervisors) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    recordTally({ suite: 'task supervisor (SIGKILL of supervisor or client)', seed: SEED, ...stats });
    rmSync(dir, { recursive: true, force: true });
  });

  const envOf = (runtime: string): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(JRUN_|CONDUCTOR_|RUN_AGENT_)/.test(k)) env[k] = v;
    return { ...env, HOME: home, XDG_RUNTIME_DIR: runtime, RUN_AGENT_SUPERVISOR: '1', RUN_AGENT_SUPERVISOR_IDLE_MS: '300', RUN_AGENT_SUPERVISOR_SHARDS: '1', RUN_AGENT_ORPHAN_GRACE_SECONDS: '1' };
  };
  const taskArgs = (task: string) => ['task', '--root', root, '--project', PROJECT, '--task', task, '--agent', 'held', '--config', config, '--prompt', 'hold', '--max-restarts', '0'];
  const agentsOf = (taskDir: string): number[] => (existsSync(join(taskDir, 'agents')) ? readFileSync(join(taskDir, 'agents'), 'utf8').trim().split('\n').filter(Boolean).map(Number) : []);
  const runInfos = (taskDir: string) => {
    const runs = join(taskDir, 'runs');
    return existsSync(runs) ? readdirSync(runs).filter((r) => existsSync(join(runs, r, 'run-info.yaml'))).map((r) => join(runs, r, 'run-info.yaml')) : [];
  };
  /** The loop's process of an agent: its parent (the gate execs the agent in place). */
  const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);

  it(`${CASES} seeded cases (FAULT_SEED=${SEED})`, async () => {
    for (let n = 0; n < CASES; n++) {
      const target: Target = n % 2 === 0 ? 'supervisor' : 'client';
      const delayMs = Math.floor(random() * 600);
      const victim = Math.floor(random() * TASKS);
      const context = `FAULT_SEED=${SEED}, case ${n}: ${target} +${delayMs} ms`;
      const check = (what: string, ok: boolean, detail?: () => string) => checkInvariant(stats, context, what, ok, detail);
      const runtime = join(dir, `xdg-${n}`);
      mkdirSync(runtime, { mode: 0o700 });
      const env = envOf(runtime);
      const tasks = Array.from({ length: TASKS }, (_, i) => `task-20260101-000000-sup-${n}-${i}`);
      const clients = tasks.map((t) => {
        const child = spawn(process.execPath, [RUN_AGENT, ...taskArgs(t)], { env, cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr!.on('data', (d) => (stderr += d));
        children.push(child);
        return { child, exit: exitOf(child).then((code) => ({ code, signal: child.signalCode, stderr: () => stderr })) };
      });
      // the seeded point: after the supervisor listens (a client that is still connecting then starts the next one)
      const first = await waitFor('the supervisor listening', () => {
        const pid = supervisorIn(runtime);
        return pid && readdirSync(join(runtime, 'run-agent')).some((f) => f.endsWith('.sock')) && pid;
      }, 20_000);
      supervisors.add(first);
      await new Promise((r) => setTimeout(r, delayMs));
      stats.cases++;
      stats.faults++;
      if (target === 'supervisor') process.kill(first, 'SIGKILL');
      else clients[victim].child.kill('SIGKILL');
      // each client either ends (its task was cut) or runs its agent under a live supervisor
      const lastAgent = (i: number) => agentsOf(layout.taskDir(PROJECT, tasks[i])).pop();
      const settled = async (i: number) => {
        const ended = await Promise.race([clients[i].exit, new Promise<undefined>((r) => setTimeout(() => r(undefined), 25))]);
        if (ended) return true;
        // the killed client has not been reaped yet: it is not running anything
        if (target === 'client' && i === victim) return false;
        const agent = lastAgent(i);
        if (!agent || !processAlive(agent)) return false;
        const parent = parentOf(agent);
        supervisors.add(parent);
        return parent !== (target === 'supervisor' ? first : 0) && processAlive(parent);
      };
      await waitFor('every client ended or running its agent', async () => (await Promise.all(tasks.map((_, i) => settled(i)))).every(Boolean), 30_000);
      const cut = new Set<number>();
      for (let i = 0; i < TASKS; i++) {
        const c = clients[i];
        if (c.child.exitCode === null && c.child.signalCode === null) continue;
        cut.add(i);
        const r = await c.exit;
        check('a client ends only when its task was cut, never with 0', r.code !== 0, () => `exit ${r.code} ${r.stderr()}`);
        // (the client that started the supervisor may see it die before it reached it: then no task started)
        if (i !== victim || target === 'supervisor') check('a client cut by the supervisor\'s death says why', /ended before the task did|ended \(SIGKILL\) before this client reached it, so no task started/.test(r.stderr()), r.stderr);
      }
      check('the killed client is among the cut', target === 'supervisor' || cut.has(victim));
      // nothing of the cut tasks runs any more
      for (const i of cut) {
        const taskDir = layout.taskDir(PROJECT, tasks[i]);
        await waitFor(`${tasks[i]}: its agents gone`, () => agentsOf(taskDir).every((p) => !processAlive(p)), 20_000);
      }
      // GO for every task; the cut ones recover with the product's own `task --adopt`, through a (new) supervisor
      for (const t of tasks) {
        mkdirSync(layout.taskDir(PROJECT, t), { recursive: true });
        writeFileSync(join(layout.taskDir(PROJECT, t), 'GO'), '');
      }
      const recoveries = await Promise.all([...cut].map((i) => runCli([...taskArgs(tasks[i]), '--adopt'], { env, cwd: home })));
      for (const r of recoveries) check('the recovery ends the task done', r.code === 0, () => `exit ${r.code}: ${r.stderr}`);
      for (let i = 0; i < TASKS; i++) {
        if (cut.has(i)) continue;
        const r = await clients[i].exit;
        check('a task the fault did not cut ends done', r.code === 0, () => `exit ${r.code}: ${r.stderr()}`);
      }
      for (const t of tasks) {
        const taskDir = layout.taskDir(PROJECT, t);
        check(`${t} is DONE`, existsSync(join(taskDir, 'DONE')));
        check(`${t}: no two agents ran at once`, !existsSync(join(taskDir, 'agents.overlap')), () => readFileSync(join(taskDir, 'agents.overlap'), 'utf8'));
        const recorded = new Set(runInfos(taskDir).map((f) => readRunInfo(f).pid));
        check(`${t}: every agent that ran is named by a run record`, agentsOf(taskDir).every((p) => recorded.has(p)), () => `agents ${agentsOf(taskDir)}, records ${[...recorded]}`);
        for (const f of runInfos(taskDir)) {
          const info = readRunInfoReconciled(f, ZOMBIE_AWARE_PROBE);
          check(`${t}: run ${info.run_id} does not read as running`, info.status !== 'running', () => readFileSync(f, 'utf8'));
        }
        check(`${t}: no agent left alive`, agentsOf(taskDir).every((p) => !processAlive(p)));
      }
    }
  }, 300_000);
});

/** The task supervisor serving a socket under `runtime` (its command line names the socket). */
function supervisorIn(runtime: string): number | undefined {
  for (const p of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('task-supervisor.js')) && argv.some((a) => a.startsWith(runtime))) return Number(p);
    } catch {
      // gone
    }
  }
  return undefined;
}
