import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { readOwnerEpoch, readRunInfo, readRunInfoReconciled, RunsLayout } from '@app/storage';
import { RUN_AGENT, runCli } from '../utils/cli';
import { envWithFakeAgents } from '../utils/fake-agents';
import { processAlive, ZOMBIE_AWARE_PROBE } from '../utils/processes';
import { exitOf, waitFor } from '../utils/wait';
import { rng } from './fiu';
import { checkInvariant, recordTally } from './tally';

/**
 * Issue #31 chaos part: SIGKILL / SIGSTOP at seeded random points of a task loop's start, its
 * restart between runs and the adoption of a live agent whose runner died. A case starts the real
 * built `run-agent task` in its own process group, waits for the phase marker (the task's
 * OWNER-EPOCH / a second run / a running agent), waits a random 0–400 ms and then signals: SIGKILL
 * to the whole group (start, restart), SIGKILL to the runner alone leaving its agent (adoption), or
 * SIGSTOP of the runner past its lease (the next loop takes over; SIGCONT after). Recovery is the
 * product's own `run-agent task --adopt`. Invariants: every bus record present at the signal is
 * still there byte-identical; bus and every run-info parse; no run reads as running once the
 * recovery is over; at most one live agent of the task at any sample; the owner epoch only grows;
 * the next start says what it found (an adoption or takeover record on the bus).
 * FAULT_SEED replays a run; FAULT_CHAOS_CASES scales it (default 8).
 */
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const CASES = Number(process.env.FAULT_CHAOS_CASES ?? 8);
const LEASE_MS = 1500;
const PROJECT = 'chaos';


type Phase = 'start' | 'restart' | 'adoption' | 'stop-past-lease';
interface Case {
  n: number;
  phase: Phase;
  delayMs: number;
}

function plan(seed: number, count: number): Case[] {
  const random = rng(seed);
  const phases: Phase[] = ['start', 'restart', 'adoption', 'stop-past-lease'];
  // every phase at least once, then random ones
  return Array.from({ length: count }, (_, n) => ({
    n,
    phase: n < phases.length ? phases[n] : phases[Math.floor(random() * phases.length)],
    delayMs: Math.floor(random() * 400),
  }));
}

describe('chaos: SIGKILL / SIGSTOP at seeded points of task start, restart and adoption', () => {
  let dir: string;
  let root: string;
  let cwd: string;
  let layout: RunsLayout;
  const stats = { cases: 0, faults: 0, checks: 0, violations: 0 };
  const children: ChildProcess[] = [];
  const base = envWithFakeAgents({ NODE_DISABLE_COMPILE_CACHE: '1', CONDUCTOR_ROOT: undefined, RUN_AGENT_ROOT: undefined, CONDUCTOR_TASK_LEASE_MS: String(LEASE_MS) });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'chaos-'));
    root = join(dir, 'runs');
    cwd = join(dir, 'cwd');
    mkdirSync(cwd, { recursive: true });
    layout = new RunsLayout(root);
  });
  afterAll(() => {
    for (const c of children) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      try {
        process.kill(-c.pid!, 'SIGCONT');
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    recordTally({ suite: 'chaos (SIGKILL/SIGSTOP of task loops)', seed: SEED, ...stats });
    rmSync(dir, { recursive: true, force: true });
  });

  function check(c: Case, what: string, ok: boolean, detail: () => string = () => ''): void {
    checkInvariant(stats, `FAULT_SEED=${SEED}, case ${c.n}: ${c.phase} +${c.delayMs} ms`, what, ok, detail);
  }

  /** `run-agent task` in its own process group (the signal reaches the runner and its agents). */
  function startLoop(task: string, env: NodeJS.ProcessEnv): ChildProcess {
    const args = ['task', '--root', root, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'work', '--cwd', cwd];
    const child = spawn(process.execPath, [RUN_AGENT, ...args], { env, detached: true, stdio: 'ignore' });
    children.push(child);
    return child;
  }

  function runDirs(taskDir: string): string[] {
    const runs = join(taskDir, 'runs');
    return existsSync(runs) ? readdirSync(runs).filter((r) => existsSync(join(runs, r, 'run-info.yaml'))).map((r) => join(runs, r)) : [];
  }

  function liveAgents(taskDir: string): number[] {
    return runDirs(taskDir)
      .map((d) => readRunInfo(join(d, 'run-info.yaml')))
      .filter((i) => i.status === 'running' && i.pid > 0 && processAlive(i.pid))
      .map((i) => i.pid);
  }

  const cases = plan(SEED, CASES);
  it(`${CASES} seeded cases (FAULT_SEED=${SEED})`, async () => {
    for (const c of cases) {
      const task = `task-20260101-000000-chaos-${c.n}`;
      const taskDir = layout.taskDir(PROJECT, task);
      const bus = layout.taskBus(PROJECT, task);
      const firstEnv =
        c.phase === 'restart'
          ? { ...base, FAKE_AGENT_SLEEP_MS: '50' }
          : { ...base, FAKE_AGENT_SLEEP_MS: '3000', FAKE_AGENT_DONE: '1' };
      const loop = startLoop(task, firstEnv);
      const exited = exitOf(loop);

      // the phase marker
      if (c.phase === 'start') await waitFor('the task to be claimed', () => existsSync(join(taskDir, 'OWNER-EPOCH')), 30_000);
      else if (c.phase === 'restart') await waitFor('a restart (second run)', () => runDirs(taskDir).length >= 2, 30_000);
      else await waitFor('a running agent', () => liveAgents(taskDir).length === 1, 30_000);
      await new Promise((r) => setTimeout(r, c.delayMs)); // the seeded random point after the marker

      stats.cases++;
      stats.faults++;
      const epochBefore = existsSync(join(taskDir, 'OWNER-EPOCH')) ? readOwnerEpoch(taskDir) : 0;
      if (c.phase === 'start' || c.phase === 'restart') process.kill(-loop.pid!, 'SIGKILL');
      else if (c.phase === 'adoption') process.kill(loop.pid!, 'SIGKILL');
      else process.kill(loop.pid!, 'SIGSTOP');
      if (c.phase !== 'stop-past-lease') await exited;

      const busBefore = existsSync(bus) ? readFileSync(bus, 'utf8') : '';
      const msgsBefore = readMessages(bus);
      const hadLiveAgent = liveAgents(taskDir).length > 0;
      const infosBefore = runDirs(taskDir).map((d) => readFileSync(join(d, 'run-info.yaml'), 'utf8')).join('\n');

      // recovery with the product's own command; samples the agents meanwhile
      let maxLive = 0;
      const sampler = setInterval(() => (maxLive = Math.max(maxLive, liveAgents(taskDir).length)), 25);
      const recoveryEnv = { ...base, FAKE_AGENT_DONE: '1', FAKE_AGENT_SLEEP_MS: '100' };
      const recovery = runCli(['task', '--adopt', '--root', root, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'work', '--cwd', cwd], { env: recoveryEnv });
      if (c.phase === 'stop-past-lease') {
        await waitFor('the takeover record', () => readMessages(bus).some((m) => m.body.startsWith('took over the task')), 30_000);
        process.kill(loop.pid!, 'SIGCONT');
      }
      const result = await recovery;
      clearInterval(sampler);
      if (c.phase === 'stop-past-lease') await exited;

      check(c, 'the recovery succeeds', result.code === 0, () => `exit ${result.code}: ${result.stderr}`);
      const busAfter = readFileSync(bus, 'utf8');
      const msgsAfter = readMessages(bus); // parses every record
      const byId = new Map(msgsAfter.map((m) => [m.msg_id, JSON.stringify(m)]));
      check(c, 'every bus record present at the signal is still there, identical', msgsBefore.every((m) => byId.get(m.msg_id) === JSON.stringify(m)));
      check(c, 'the bus only grew', busAfter.startsWith(busBefore.slice(0, busBefore.lastIndexOf('\n') + 1)));
      for (const d of runDirs(taskDir)) {
        // parses, or throws; healed with a probe that counts a zombie as gone (this machine's init reaps late)
        const info = readRunInfoReconciled(join(d, 'run-info.yaml'), ZOMBIE_AWARE_PROBE);
        check(c, `run ${info.run_id} does not read as running after the recovery`, info.status !== 'running', () => `${readFileSync(join(d, 'run-info.yaml'), 'utf8')}\nbefore: ${infosBefore}\nrecovery: ${result.stdout}${result.stderr}`);
        check(c, `run ${info.run_id} says how it ended`, info.status === 'completed' || (info.error_summary ?? '').trim() !== '', () => readFileSync(join(d, 'run-info.yaml'), 'utf8'));
      }
      check(c, 'no agent of the task is left alive', liveAgents(taskDir).length === 0);
      check(c, 'at most one live agent of the task at any sample', maxLive <= 1, () => `saw ${maxLive}`);
      check(c, 'the owner epoch grew', readOwnerEpoch(taskDir) > epochBefore, () => `${epochBefore} → ${readOwnerEpoch(taskDir)}`);
      const bodies = msgsAfter.map((m) => m.body);
      if (c.phase === 'stop-past-lease') check(c, 'the takeover says it took over', bodies.some((b) => b.startsWith('took over the task from a runner')));
      const adopting = bodies.filter((b) => b.startsWith('adopting run ')).map((b) => b.split(' ')[2]);
      check(c, 'every adoption the next start announces is closed', adopting.every((id) => bodies.some((b) => b.startsWith(`adopted run ${id} ended`))), () => bodies.join('\n'));
      if (c.phase === 'stop-past-lease') check(c, 'the takeover adopts the stopped runner\'s live agent', adopting.length === 1 && hadLiveAgent, () => bodies.join('\n'));
    }
  }, 300_000);
});
