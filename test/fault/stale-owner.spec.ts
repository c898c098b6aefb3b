import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readOwnerEpoch, RunsLayout } from '@app/storage';
import { busMessages, cliEnv, commandAgentSandbox, COUNTED_AGENT_PRELUDE, PROJECT, processAlive, RUN_AGENT, runInfos, stopOutsideFencedWrite, waitFor } from '../e2e/runner/helpers';
import { checkInvariant, recordTally } from './tally';
import { ERRNOS, type ErrnoName, type Fault, type FaultPoint, rng, runWithFault } from './fiu';

/**
 * Stale owners (issue #31): a runner SIGSTOPped at a seeded point (while its agent runs, or in
 * the pause before a restart) past its lease, another `task resume --adopt` takes the task over,
 * then SIGCONT. Or the claim itself fails under libfiu (fsync / rename of the epoch record with
 * EIO, ENOSPC, EDQUOT): a claim that is not durable is no claim, and the stopped runner stays the
 * owner. Invariants: a stale owner writes nothing (the task's bus and run-info bytes unchanged),
 * exits 1 naming the epochs, and starts no agent; exactly one agent runs after a claim and never
 * two at once; every record carries the epoch of its writer. FAULT_SEED replays,
 * FAULT_EPOCH_ROUNDS changes the number of rounds (default 6). This suite fails on a build whose
 * epoch check is removed (the stale runner then writes its RUN_STOP, or restarts).
 */
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const ROUNDS = Number(process.env.FAULT_EPOCH_ROUNDS ?? 6);
const LEASE_MS = '300';

const AGENT = `${COUNTED_AGENT_PRELUDE}n=$(wc -l < "$COUNTER_FILE")
if [ "$n" -ge 2 ]; then touch "$JRUN_TASK_FOLDER/DONE"; exit 0; fi
if [ "$BLOCK_FIRST" = 1 ]; then while [ ! -e "$RELEASE_FILE" ]; do sleep 0.05; done; fi
`;

type Kind = 'stop-during-agent' | 'stop-before-restart' | 'claim-fault';
interface Round {
  n: number;
  kind: Kind;
  fault?: Fault;
}

function plan(seed: number, count: number): Round[] {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const kinds: Kind[] = ['stop-during-agent', 'stop-before-restart', 'claim-fault'];
  const points: FaultPoint[] = ['posix/io/sync/fsync', 'posix/io/dir/rename'];
  return Array.from({ length: count }, (_, n) => {
    // every kind at least once, then seeded
    const kind = n < kinds.length ? kinds[n] : pick(kinds);
    return { n, kind, fault: kind === 'claim-fault' ? { point: pick(points), errno: pick(Object.keys(ERRNOS) as ErrnoName[]) } : undefined };
  });
}

interface Outcome {
  code: number | null;
  stderr: string;
}

describe('fault injection: stale owners after SIGSTOP and failed claims (fencing epochs)', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('stale', AGENT);
  const layout = new RunsLayout(tmp.root);
  const stats = { rounds: 0, faults: 0, checks: 0, violations: 0 };
  // a fault here is a SIGSTOP past the lease followed by a takeover, or a failed claim
  afterAll(() => recordTally({ suite: 'stale owners (SIGSTOP, failed claims)', seed: SEED, cases: stats.rounds, faults: stats.faults, checks: stats.checks, violations: stats.violations }));

  function check(r: Round, what: string, ok: boolean, detail: () => string = () => ''): void {
    checkInvariant(stats, `FAULT_SEED=${SEED}, round ${r.n}: ${r.kind}${r.fault ? ` ${r.fault.point} ${r.fault.errno}` : ''}`, what, ok, detail);
  }

  const scope = (task: string) => ['--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'stale', '--config', configPath];

  function cli(args: string[], env: Record<string, string>): { child: ChildProcess; done: Promise<Outcome> } {
    const child = spawn(process.execPath, [RUN_AGENT, ...args], { env: cliEnv(home, env), cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    return { child, done: new Promise<Outcome>((resolve) => child.on('close', (code) => resolve({ code, stderr }))) };
  }

  function taskBytes(taskDir: string): Record<string, string> {
    const out: Record<string, string> = { bus: readFileSync(layout.taskBus(PROJECT, taskDir.split('/').pop()!), 'utf8') };
    for (const run of readdirSync(join(taskDir, 'runs'))) {
      for (const file of readdirSync(join(taskDir, 'runs', run))) out[`${run}/${file}`] = readFileSync(join(taskDir, 'runs', run, file), 'utf8');
    }
    return out;
  }

  async function round(r: Round): Promise<void> {
    const task = `task-20260101-120000-stale-${SEED}-${r.n}`;
    const taskDir = layout.taskDir(PROJECT, task);
    const bus = layout.taskBus(PROJECT, task);
    const counter = join(base, `${task}.count`);
    const release = join(base, `${task}.release`);
    const starts = () => (existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n').length : 0);
    const env = { COUNTER_FILE: counter, RELEASE_FILE: release, BLOCK_FIRST: r.kind === 'stop-before-restart' ? '0' : '1', CONDUCTOR_TASK_LEASE_MS: LEASE_MS };
    // a pause before the restart (3 s), so that the runner is stopped inside it
    const first = cli(['task', ...scope(task), '--prompt', `round ${r.n}`, '--max-restarts', '3', '--restart-delay', r.kind === 'stop-before-restart' ? '3s' : '10ms'], env);
    const runner = first.child.pid!;
    try {
      const firstRun = await waitFor(`round ${r.n}: the first agent started`, () => runInfos(taskDir).find((i) => i.pid > 0 && i.pid !== runner && i.pgid === i.pid), 20_000);
      const settled = r.kind === 'stop-before-restart' ? 'RUN_STOP' : 'RUN_START';
      await waitFor(`round ${r.n}: ${settled} of the first run`, () => busMessages(bus).some((m) => m.type === settled && m.run_id === firstRun.run_id), 20_000);
      await stopOutsideFencedWrite(runner, taskDir);
      stats.faults++;
      const claimArgs = ['task', 'resume', ...scope(task), '--adopt', '--restart-delay', '10ms'];

      if (r.kind === 'claim-fault') {
        const out = await runWithFault(claimArgs, r.fault, cliEnv(home, env));
        const errors = out.stderr.split('\n').filter((l) => l.startsWith('Error: '));
        check(r, 'a claim whose epoch record is not durable fails with one error line naming the errno', out.code === 1 && errors.length === 1 && (errors[0].includes(r.fault!.errno) || errors[0].includes(`-${ERRNOS[r.fault!.errno]}`)), () => out.stderr);
        check(r, 'the failed claim leaves the epoch unchanged and no temp file', readOwnerEpoch(taskDir) === 1 && !readdirSync(taskDir).some((f) => f.endsWith('.tmp')), () => readdirSync(taskDir).join(','));
        process.kill(runner, 'SIGCONT');
        writeFileSync(release, '');
        const owner = await first.done;
        check(r, 'the runner stays the owner and completes the task', owner.code === 0 && existsSync(join(taskDir, 'DONE')), () => owner.stderr);
        check(r, 'every record carries the one epoch', busMessages(bus).every((m) => m.owner_epoch === 1) && runInfos(taskDir).every((i) => i.owner_epoch === 1));
        check(r, 'two agents ran, one after the other', starts() === 2 && !existsSync(`${counter}.overlap`));
        return;
      }

      const claimant = cli(claimArgs, env);
      let claimantExit: Outcome | undefined;
      void claimant.done.then((o) => (claimantExit = o));
      if (r.kind === 'stop-during-agent') {
        await waitFor(`round ${r.n}: the claimant adopts the first agent`, () => {
          if (claimantExit) throw new Error(`the claimant exited ${claimantExit.code}: ${claimantExit.stderr}`);
          return busMessages(bus).some((m) => m.body.startsWith(`adopting run ${firstRun.run_id}`));
        }, 20_000);
        writeFileSync(release, '');
      }
      const claimed = await claimant.done;
      check(r, 'the claimant completes the task', claimed.code === 0 && existsSync(join(taskDir, 'DONE')), () => claimed.stderr);
      check(r, 'the claim is epoch 2', readOwnerEpoch(taskDir) === 2);
      const before = taskBytes(taskDir);
      const startsAfterClaim = starts() - 1;

      process.kill(runner, 'SIGCONT');
      const stale = await first.done;
      check(r, 'the stale runner exits 1 naming the epochs', stale.code === 1 && stale.stderr.includes('holds epoch 1') && stale.stderr.includes('(epoch 2); writing nothing more'), () => `${stale.code} ${stale.stderr}`);
      check(r, 'the stale runner wrote nothing (bus and run-info bytes unchanged)', JSON.stringify(taskBytes(taskDir)) === JSON.stringify(before));
      check(r, 'exactly one agent ran after the claim, none next to another', startsAfterClaim === 1 && starts() === 2 && !existsSync(`${counter}.overlap`), () => `${starts()}`);
      const messages = busMessages(bus);
      const takeover = messages.findIndex((m) => m.type === 'WARNING' && m.body.startsWith('took over the task'));
      check(r, 'records before the takeover are epoch 1, from it on epoch 2', takeover > 0 && messages.every((m, i) => m.owner_epoch === (i < takeover ? 1 : 2)));
    } finally {
      writeFileSync(release, '');
      if (processAlive(runner)) process.kill(runner, 'SIGCONT');
    }
  }

  it(`keeps every invariant across ${ROUNDS} seeded rounds (FAULT_SEED replays)`, async () => {
    for (const r of plan(SEED, ROUNDS)) {
      stats.rounds++;
      await round(r);
    }
    expect(stats.rounds).toBe(ROUNDS);
  }, 120_000);
});
