import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { P } from '../e2e/worktree/helpers';
import { RunningServer, startConductor } from '../e2e/server/helpers';
import { RUN_AGENT } from '../utils/cli';
import { processAlive } from '../utils/processes';
import { exitOf, waitFor } from '../utils/wait';
import { rng } from './fiu';
import { checkEndState, MARK, markedProcesses, MergeCase } from './merge-kill-helpers';
import { checkInvariant, recordTally } from './tally';

/**
 * SIGKILL of the process driving a repository's merge queue at seeded random points (issue #31):
 * `run-agent merge`, and the `bin/conductor` server merging for its clients. Three worktree tasks
 * with commits of their own (one may carry uncommitted leftovers, one may fail the verify) are
 * queued with a verify command that runs a while and leaves a straggler in its process group.
 * The kill falls at the start (queueing), during a task's verify, or right after it (the git merge
 * into the base, the recording); every other CLI round kills the CLI's whole process group, its
 * git children mid-operation included. Then the CLI runs again / the server restarts (it resumes the
 * queues at boot). Invariants: no process of the killed driver outlives it (verify groups
 * included); git fsck passes, no MERGE_HEAD or index.lock, the main checkout clean on main, no
 * scratch worktree left; every queued merge ends merged (exactly once, in queue order, its merge
 * commit named in the queue, WORKTREE.yaml and the task bus) or failed with the verify's reason
 * in all three; an interrupted merge is named on its task bus by the resumption, and the server's
 * log says how many merges it found. FAULT_SEED replays, FAULT_MERGE_ROUNDS sets the CLI rounds
 * (the server gets half as many).
 */
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const CLI_ROUNDS = Number(process.env.FAULT_MERGE_ROUNDS ?? 6);
const SERVER_ROUNDS = Math.max(1, Math.ceil(CLI_ROUNDS / 2));
const TASKS = 3;

type Phase = 'start' | 'verify' | 'after-verify';
const PHASES: Phase[] = ['start', 'verify', 'after-verify'];

interface KillPlan {
  phase: Phase;
  /** The task whose verify the kill follows. */
  k: number;
  /** The seeded delay after the phase's event, ms. */
  delay: number;
  broken: number;
  leftover: number;
}

describe('fault injection: SIGKILL of the merge queue driver (run-agent merge, the server) at seeded points', () => {
  const random = rng(SEED);
  const stats = { cases: 0, faults: 0, checks: 0, violations: 0 };
  const cases: MergeCase[] = [];
  const children: ChildProcess[] = [];
  let server: RunningServer | undefined;
  afterAll(async () => {
    recordTally({ suite: 'merge queue driver SIGKILL at seeded points', seed: SEED, cases: stats.cases, faults: stats.faults, checks: stats.checks, violations: stats.violations });
    await server?.stop('SIGKILL');
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const c of cases) c.cleanup();
  });

  function plan(): KillPlan {
    const phase = PHASES[Math.floor(random() * PHASES.length)];
    const k = Math.floor(random() * TASKS);
    const window = phase === 'start' ? 900 : phase === 'verify' ? 250 : 80;
    return { phase, k, delay: Math.floor(random() * window), broken: Math.floor(random() * (TASKS + 1)) - 1, leftover: Math.floor(random() * TASKS) };
  }

  async function newCase(n: number, p: KillPlan, kind: string): Promise<MergeCase> {
    const c = new MergeCase();
    cases.push(c);
    for (let i = 0; i < TASKS; i++) await c.addTask(`task-20260101-120000-${kind}${n}-${i}`, i === p.broken, i === p.leftover);
    return c;
  }

  /** Waits for the plan's event (the verify of task k starting, or ending), then its delay; false when `alive` turned false first. */
  async function killPoint(c: MergeCase, p: KillPlan, alive: () => boolean, from: number): Promise<boolean> {
    const task = c.tasks[p.k].id;
    if (p.phase !== 'start') {
      const started = await waitFor(`the verify of ${task}`, () => c.verifyLines().find((l) => l[0] === 'start' && l[1] === task) ?? (!alive() && ['gone']), { timeoutMs: 60_000, intervalMs: 5 });
      if (started[0] === 'gone') return false;
      if (p.phase === 'after-verify') await waitFor(`the verify of ${task} to end`, () => !processAlive(Number(started[2])) || !alive(), { timeoutMs: 60_000, intervalMs: 5 });
      from = Date.now();
    }
    const left = from + p.delay - Date.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
    return alive();
  }

  /** No process of the killed driver (verify commands and their stragglers included) outlives it. */
  async function checkNoneLeft(mark: string, check: (what: string, ok: boolean, detail?: () => string) => void): Promise<void> {
    const left = await waitFor(`the processes of ${mark} to die`, () => markedProcesses(mark).length === 0 && [], 20_000).catch(() => markedProcesses(mark));
    check(`no process of the killed driver (${mark}) outlives it`, left.length === 0, () => left.join('; '));
  }

  /** Pending entries of the queue before the resumption: interrupted ones (verifying) must be named on their task's bus. */
  function beforeResume(c: MergeCase) {
    const pending = c.queueNow().filter((e) => e.state === 'queued' || e.state === 'verifying');
    const interrupted = pending.filter((e) => e.state === 'verifying').map((e) => ({ task: e.task_id, busLength: c.bus(e.task_id).length }));
    return { pending, interrupted };
  }

  function checkNamed(c: MergeCase, interrupted: Array<{ task: string; busLength: number }>, check: (what: string, ok: boolean, detail?: () => string) => void): void {
    for (const i of interrupted) {
      const found = c.bus(i.task).slice(i.busLength);
      check(`the resumption names the interrupted merge of ${i.task} on its bus`, found.some((m) => m.type === 'INFO' && /interrupted/.test(m.body)), () => found.map((m) => `${m.type} ${m.body}`).join(' | '));
    }
  }

  it(`run-agent merge: keeps every invariant across ${CLI_ROUNDS} seeded kill points (FAULT_SEED replays)`, async () => {
    for (let n = 0; n < CLI_ROUNDS; n++) {
      const p = plan();
      stats.cases++;
      // odd rounds kill the CLI's whole process group (its git children mid-operation too, as a service manager's stop would)
      const group = n % 2 === 1;
      const context = `FAULT_SEED=${SEED}, run-agent merge round ${n}: ${group ? 'group' : 'process'} killed at ${p.phase} of task ${p.k} + ${p.delay} ms, broken ${p.broken}, leftover ${p.leftover}`;
      const check = (what: string, ok: boolean, detail?: () => string) => checkInvariant(stats, context, what, ok, detail);
      const c = await newCase(n, p, 'cli');
      for (const t of c.tasks.slice(0, -1)) c.queue(t.id);
      const last = c.tasks[TASKS - 1];
      const args = ['merge', ...c.scope(last.id), '--config', c.config];
      const mark = `cli-${SEED}-${n}`;
      const started = Date.now();
      const child = spawn(process.execPath, [RUN_AGENT, ...args], { cwd: c.dir, env: c.env({ VERIFY_LOG: c.verifyLog, [MARK]: mark }), stdio: 'ignore', detached: group });
      children.push(child);
      const exited = exitOf(child);
      const alive = () => child.exitCode === null && child.signalCode === null;
      if (!(await killPoint(c, p, alive, started))) {
        console.log(`merge-kills: ${context}: the merge ended before the kill point (no fault)`);
        await exited;
        checkEndState(c, check);
        continue;
      }
      if (group) process.kill(-child.pid!, 'SIGKILL');
      else child.kill('SIGKILL');
      await exited;
      stats.faults++;
      await checkNoneLeft(mark, check);
      const { interrupted } = beforeResume(c);

      const r = await c.run(args, { env: { VERIFY_LOG: c.verifyLog, [MARK]: `${mark}-resume` } });
      check('the resumed merge of the last task says how it ended', last.broken ? r.code === 1 && /^Error: verify command .* failed/.test(r.stderr) : r.code === 0 && /^(merged .* \([0-9a-f]{40}\)|.* is already merged into main)\n$/.test(r.stdout), () => `exit ${r.code}: ${r.stdout}${r.stderr}`);
      await checkNoneLeft(`${mark}-resume`, check);
      checkNamed(c, interrupted, check);
      checkEndState(c, check);
    }
    expect(stats.faults).toBeGreaterThan(0);
  }, 240_000);

  it(`the server: keeps every invariant across ${SERVER_ROUNDS} seeded kill points, resuming the queue at boot (FAULT_SEED replays)`, async () => {
    const faultsBefore = stats.faults;
    for (let n = 0; n < SERVER_ROUNDS; n++) {
      const p = plan();
      stats.cases++;
      const context = `FAULT_SEED=${SEED}, server round ${n}: ${p.phase} of task ${p.k} + ${p.delay} ms, broken ${p.broken}, leftover ${p.leftover}`;
      const check = (what: string, ok: boolean, detail?: () => string) => checkInvariant(stats, context, what, ok, detail);
      const c = await newCase(n, p, 'srv');
      const mark = `srv-${SEED}-${n}`;
      server = await startConductor(c.dir, c.root, c.config, { VERIFY_LOG: c.verifyLog, [MARK]: mark });
      const s = server;
      const alive = () => s.child.exitCode === null && s.child.signalCode === null;
      const mergeUrl = (t: string) => `${server!.url}/api/projects/${P}/tasks/${t}/merge`;
      // the clients' requests: each waits until its merge is queued (the server may die under them)
      const asked: Array<Promise<unknown>> = [];
      let from = Date.now();
      for (const [i, t] of c.tasks.entries()) {
        from = Date.now();
        asked.push(fetch(mergeUrl(t.id), { method: 'POST' }).then((res) => res.status, (e: Error) => e.message));
        if (p.phase === 'start' && i === p.k) break;
        await waitFor(`${t.id} queued`, () => c.queueNow().some((e) => e.task_id === t.id) || !alive(), 30_000);
      }
      const killed = await killPoint(c, { ...p, delay: p.phase === 'start' ? Math.floor(p.delay / 10) : p.delay }, alive, from);
      if (killed) {
        await s.stop('SIGKILL');
        stats.faults++;
      } else console.log(`merge-kills: ${context}: the server died before the kill point`);
      await Promise.all(asked);
      await checkNoneLeft(mark, check);
      const { pending, interrupted } = beforeResume(c);

      server = await startConductor(c.dir, c.root, c.config, { VERIFY_LOG: c.verifyLog, [MARK]: `${mark}-restart` });
      const restarted = server;
      const log = () => restarted.stdout() + restarted.stderr();
      if (pending.length) {
        check('the restarted server says what it found', log().includes(`resuming ${pending.length} merge(s), ${interrupted.length} interrupted during verify`), () => log());
        const ended = await waitFor('the resumption to finish', () => log().split('\n').find((l) => /merge queue of /.test(l) && !/resuming/.test(l)), 60_000);
        check('the restarted server ran every pending merge', ended.includes(`ran ${pending.length} merge(s)`), () => log());
      }
      // a client asks again for the merges the server never queued
      const unqueued = c.tasks.filter((t) => !c.queueNow().some((e) => e.task_id === t.id));
      for (const t of unqueued) {
        const status = await fetch(mergeUrl(t.id), { method: 'POST' }).then((res) => res.status);
        check(`the merge of ${t.id} asked again answers how it ended`, status === (t.broken ? 409 : 200), () => String(status));
      }
      checkNamed(c, interrupted, check);
      checkEndState(c, check);
      await restarted.stop('SIGTERM');
      server = undefined;
      await checkNoneLeft(`${mark}-restart`, check);
    }
    expect(stats.faults).toBeGreaterThan(faultsBefore);
  }, 240_000);
});
