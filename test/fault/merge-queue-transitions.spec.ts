import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { RunsLayout } from '@app/storage';
import { ensureTaskWorktree, mergeQueuePath, readMergeQueue, readWorktreeRecord, type MergeQueueEntry } from '@app/worktree';
import { gitSync, makeRepo } from '../utils/git-repo';
import { runCli } from '../utils/cli';
import { recordTally } from './tally';
import { enableCommand, ERRNOS, type ErrnoName, type Fault, type FaultPoint, type Outcome, rng, runWithFault, spawnUnderFiu } from './fiu';

/**
 * The merge queue's state changes under libfiu (issue #31): `run-agent merge` under fiu-run, with
 * the fault armed at the transition under test. `claim` (queued → verifying): fsync or rename fail
 * from the start, the entry having been queued by an earlier process. `merged` / `failed`
 * (verifying → merged / failed): the verify command itself arms the fault in the merging process
 * (fiu-ctrl), then passes or fails; fsync and rename fail from then on. (write(2) is armed in the
 * CLI cases of fault-injection.spec.ts: here the next write may be libuv's own wake-up.) Each
 * case has a second merge waiting behind the faulted one. Invariants: the queue always parses and
 * holds a whole state (the one before the failed write, never half of one), no temp file is left,
 * a failure is reported naming the errno; an acknowledged merge (exit 0) is in the base branch;
 * then one merge of the waiting task (no fault) completes the faulted one first (re-verified) and
 * then its own, in queue order, and no branch is merged twice. FAULT_SEED replays.
 */
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
const P = 'fault';
type Transition = 'claim' | 'merged' | 'failed';
const PLAN: Array<[Transition, FaultPoint[]]> = [
  ['claim', ['posix/io/sync/fsync', 'posix/io/dir/rename']],
  ['merged', ['posix/io/sync/fsync', 'posix/io/dir/rename']],
  ['failed', ['posix/io/sync/fsync', 'posix/io/dir/rename']],
];

/** Arms the fault named in $ARM_DIR/arm in the merging process (pid in $ARM_DIR/pid) once; fails when $ARM_DIR/fail exists (consumed). */
const VERIFY = `#!/bin/sh
if [ -f "$ARM_DIR/arm" ]; then
  cmd=$(cat "$ARM_DIR/arm"); rm -f "$ARM_DIR/arm"
  pid=$(cat "$ARM_DIR/pid")
  [ -p "$ARM_DIR/ctl-$pid.in" ] || { echo "no control FIFO for pid $pid: $(ls "$ARM_DIR" | tr '\n' ' ')"; exit 99; }
  fiu-ctrl -f "$ARM_DIR/ctl" -c "$cmd" "$pid" || exit 99
fi
if [ -f "$ARM_DIR/fail" ]; then rm -f "$ARM_DIR/fail"; echo "verify says no"; exit 3; fi
exit 0
`;

describe('fault injection (fiu-run) at every state change of the merge queue', () => {
  let dir: string;
  let repo: string;
  let root: string;
  let verify: string;
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1', CONDUCTOR_ROOT: undefined, RUN_AGENT_ROOT: undefined, CONDUCTOR_CONFIG: undefined };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fault-mq-'));
    env.HOME = dir;
    env.ARM_DIR = dir;
    repo = makeRepo(join(dir, 'repo'));
    root = join(dir, 'runs');
    verify = join(dir, 'verify.sh');
    writeFileSync(verify, VERIFY);
    chmodSync(verify, 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const layout = () => new RunsLayout(root);

  /** A finished worktree task with a change of its own, queued (as an earlier process would) behind what is queued. */
  async function queuedTask(task: string): Promise<MergeQueueEntry> {
    const taskDir = layout().taskDir(P, task);
    const w = await ensureTaskWorktree({ projectId: P, taskId: task, taskDir, request: { repo } });
    writeFileSync(join(w.path, `${task}.txt`), `${task}\n`);
    const rec = readWorktreeRecord(taskDir)!;
    const entries = existsSync(mergeQueuePath(repo)) ? readMergeQueue(repo) : [];
    const seq = entries.reduce((m, e) => Math.max(m, e.seq), 0) + 1;
    const entry: MergeQueueEntry = { seq, project_id: P, task_id: task, task_dir: resolve(taskDir), branch: rec.branch, base_branch: rec.base_branch, verify, state: 'queued', queued_at: new Date().toISOString(), attempts: 0 };
    mkdirSync(join(repo, '.conductor'), { recursive: true });
    writeFileSync(mergeQueuePath(repo), stringify({ next_seq: seq + 1, entries: [...entries, entry] }));
    return entry;
  }

  function underControl(args: string[], ctl: string): Promise<Outcome> {
    const run = spawnUnderFiu(args, env, ctl);
    writeFileSync(join(dir, 'pid'), String(run.pid)); // read by the verify command, which runs later
    return run.done;
  }

  const mergesOf = (task: string) => gitSync(repo, 'log', '--merges', '--format=%s', 'main').split('\n').filter((s) => s.endsWith(`(${task})`)).length;
  const order = () => gitSync(repo, 'log', '--merges', '--format=%s', 'main').split('\n').filter(Boolean).reverse();

  it('keeps the queue whole and in order across faults at claim, merged and failed (FAULT_SEED replays)', async () => {
    const random = rng(SEED);
    const errnos = Object.keys(ERRNOS) as ErrnoName[];
    let checks = 0;
    let faults = 0;
    let cases = 0;
    for (const [transition, points] of PLAN) {
      for (const point of points) {
        const n = cases++;
        const fault: Fault = { point, errno: errnos[Math.floor(random() * errnos.length)] };
        const what = `(FAULT_SEED=${SEED}, case ${n}: ${transition} ${point} ${fault.errno})`;
        const check = (label: string, ok: boolean, detail = '') => {
          checks++;
          if (!ok) {
            recordTally({ suite: 'merge queue (state changes)', seed: SEED, cases, faults, checks, violations: 1 });
            throw new Error(`invariant violated ${what}: ${label} ${detail}`);
          }
        };
        const a = await queuedTask(`task-20260101-120000-mq${n}a`);
        const b = await queuedTask(`task-20260101-120000-mq${n}b`);
        const ctl = join(dir, 'ctl');
        if (transition !== 'claim') writeFileSync(join(dir, 'arm'), enableCommand(fault, false));
        if (transition === 'failed') writeFileSync(join(dir, 'fail'), '');
        const queueBefore = readFileSync(mergeQueuePath(repo));
        const args = ['merge', '--root', root, '--project', P, '--task', a.task_id];
        // claim: fsync and rename fail from the start (node's start-up does neither); else the verify arms the fault
        const out = transition === 'claim' ? await runWithFault(args, fault, env) : await underControl(args, ctl);
        rmSync(join(dir, 'arm'), { force: true });
        rmSync(join(dir, 'fail'), { force: true });

        let queue: MergeQueueEntry[] = [];
        let parses = true;
        try {
          queue = readMergeQueue(repo);
        } catch {
          parses = false;
        }
        check('the queue parses', parses);
        check('no temp file is left', !readdirSync(join(repo, '.conductor')).some((f) => f.endsWith('.tmp')));
        const qa = queue.find((e) => e.seq === a.seq);
        const qb = queue.find((e) => e.seq === b.seq);
        check('the waiting merge is still queued', qb?.state === 'queued', JSON.stringify(qb));
        if (out.code === 0) {
          check('an acknowledged merge is recorded merged', qa?.state === 'merged', JSON.stringify(qa));
          check('an acknowledged merge is in the base branch', mergesOf(a.task_id) === 1);
        } else {
          const named = out.stderr.includes(fault.errno) || out.stderr.includes(`-${ERRNOS[fault.errno]}`);
          check('a failure is reported naming the errno (or the verify’s refusal)', named || (transition === 'failed' && /verify/.test(out.stderr)), out.stderr);
          if (named) faults++;
          if (transition === 'claim') check('a failed claim leaves the queue byte-identical', readFileSync(mergeQueuePath(repo)).equals(queueBefore));
          else check('a failed finish leaves a whole state (verifying, or finished)', qa !== undefined && ['verifying', 'merged', 'failed'].includes(qa.state), JSON.stringify(qa));
          check('nothing merged twice', mergesOf(a.task_id) <= 1);
        }

        // recovery: merging the waiting task completes the faulted one first, then its own
        const again = await runCli(['merge', '--root', root, '--project', P, '--task', b.task_id], { env });
        check('the waiting merge completes after the fault', again.code === 0, again.stderr);
        const final = readMergeQueue(repo);
        const fa = final.find((e) => e.seq === a.seq)!;
        check('the faulted merge is finished (merged, or reported failed)', fa.state === 'merged' || (fa.state === 'failed' && transition === 'failed' && out.code === 0), JSON.stringify(fa));
        check('each branch merged at most once', mergesOf(a.task_id) <= 1 && mergesOf(b.task_id) === 1);
        const o = order();
        if (mergesOf(a.task_id) === 1) check('in queue order', o.findIndex((s) => s.endsWith(`(${a.task_id})`)) < o.findIndex((s) => s.endsWith(`(${b.task_id})`)));
      }
    }
    recordTally({ suite: 'merge queue (state changes)', seed: SEED, cases, faults, checks, violations: 0 });
    expect(faults).toBe(cases);
  }, 180_000);
});
