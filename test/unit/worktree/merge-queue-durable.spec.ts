import { spawn } from 'node:child_process';
import { loopParts } from '../../utils/loop-parts';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { readMessages } from '@app/messagebus';
import { AppConfig, RunsLayout, StorageError, withFileLock } from '@app/storage';
import { ensureTaskWorktree, mergeQueuePath, mergeTask, readMergeQueue, readWorktreeRecord, resumeMergeQueues, taskQueueEntry, isWorktreeError } from '@app/worktree';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { processAlive } from '../../utils/processes';
import { exitOf, waitFor } from '../../utils/wait';
import { OWNER_WATCHDOG } from '../../../libs/worktree/src/hooks';

const P = 'proj';
const TASKS = ['task-20260101-000001-one', 'task-20260101-000002-two', 'task-20260101-000003-three'];

function config(verify?: string): AppConfig {
  return { agents: {}, defaults: {} as AppConfig['defaults'], api: {} as AppConfig['api'], storage: {} as AppConfig['storage'], worktree: verify ? { verify } : {} };
}

/** The durable merge queue (issue #31): order, states and resumption after a crash, with real git. */
describe('durable merge queue (real git)', () => {
  let dir: string;
  let repo: string;
  let layout: RunsLayout;
  let log: string;
  const taskDir = (t: string): string => layout.taskDir(P, t);
  const bus = (t: string) => readMessages(join(taskDir(t), 'TASK-MESSAGE-BUS.md'));
  const mergesOn = (ref: string) => gitSync(repo, 'log', '--merges', '--format=%s', ref).split('\n').filter(Boolean).reverse();

  async function startAll(): Promise<void> {
    for (const [i, t] of TASKS.entries()) {
      const w = await ensureTaskWorktree({ projectId: P, taskId: t, taskDir: taskDir(t), request: { repo } });
      writeFileSync(join(w.path, `file-${i}.txt`), `${t}\n`);
      gitSync(w.path, 'add', '-A');
      gitSync(w.path, 'commit', '-q', '-m', `work of ${t}`);
    }
  }

  /** A queue file as a crashed owner leaves it: `states[i]` for TASKS[i]. */
  function writeQueue(states: string[], verify: string): void {
    const entries = states.map((state, i) => ({
      seq: i + 1,
      project_id: P,
      task_id: TASKS[i],
      task_dir: taskDir(TASKS[i]),
      branch: `conductor/${TASKS[i]}`,
      base_branch: 'main',
      verify,
      state,
      queued_at: '2026-01-01T00:00:00.000Z',
      attempts: state === 'verifying' ? 1 : 0,
      ...(state === 'verifying' ? { started_at: '2026-01-01T00:00:01.000Z' } : {}),
    }));
    writeFileSync(mergeQueuePath(repo), stringify({ next_seq: states.length + 1, entries }));
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wt-mq-'));
    repo = makeRepo(join(dir, 'repo'));
    layout = new RunsLayout(join(dir, 'runs'));
    log = join(dir, 'verify.log');
    await startAll();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('records each merge with its order, state and timestamps; merges run in queue order', async () => {
    const verify = `echo "$JRUN_TASK_ID" >> ${log}`;
    // three callers at once: the queue decides the order, and every step follows it
    await Promise.all(TASKS.map((t) => mergeTask({ writers: loopParts.writers, taskDir: taskDir(t), config: config(verify), pollMs: 10 })));
    const queue = readMergeQueue(repo);
    expect(queue.map((e) => e.task_id).sort()).toEqual(TASKS);
    expect(queue.map((e) => [e.seq, e.state, e.outcome, e.attempts, e.verify])).toEqual([1, 2, 3].map((seq) => [seq, 'merged', 'merged', 1, verify]));
    for (const e of queue) {
      expect(Date.parse(e.queued_at) <= Date.parse(e.started_at!) && Date.parse(e.started_at!) <= Date.parse(e.finished_at!)).toBe(true);
      expect(e.commit).toBe(readWorktreeRecord(taskDir(e.task_id))?.merged_commit);
    }
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(queue.map((e) => e.task_id));
    expect(mergesOn('main')).toEqual(queue.map((e) => `Merge conductor/${e.task_id} (${e.task_id})`));
    expect(taskQueueEntry(repo, taskDir(TASKS[0]))).toMatchObject({ state: 'merged', seq: queue.find((e) => e.task_id === TASKS[0])?.seq });
    expect(taskQueueEntry(repo, taskDir(TASKS[0]))?.position).toBeUndefined();
  });

  it('after a crash: the interrupted merge is re-verified in a fresh scratch worktree, the queued ones follow in order', async () => {
    const verify = `echo "$JRUN_TASK_ID" >> ${log}; test ! -e stale.txt`;
    writeQueue(['verifying', 'queued', 'queued'], verify);
    // the half-done scratch worktree of the killed verify, with something the fresh one must not have
    const scratch = join(repo, '.conductor', 'merge', TASKS[0]);
    gitSync(repo, 'worktree', 'add', '--detach', scratch, 'main');
    writeFileSync(join(scratch, 'stale.txt'), 'left by the killed verify\n');
    expect(taskQueueEntry(repo, taskDir(TASKS[2]))).toMatchObject({ state: 'queued', position: 3 });

    const found: unknown[] = [];
    const [report] = await resumeMergeQueues([repo], { writers: loopParts.writers, onFound: (r) => found.push({ ...r }) });
    expect(found).toEqual([{ repo, pending: 3, interrupted: 1, ran: 0 }]);
    expect(report).toEqual({ repo, pending: 3, interrupted: 1, ran: 3 });
    const queue = readMergeQueue(repo);
    expect(queue.map((e) => [e.task_id, e.state, e.attempts])).toEqual([[TASKS[0], 'merged', 2], [TASKS[1], 'merged', 1], [TASKS[2], 'merged', 1]]);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(TASKS);
    expect(mergesOn('main')).toEqual(TASKS.map((t) => `Merge conductor/${t} (${t})`));
    expect(existsSync(scratch)).toBe(false);
    expect(gitSync(repo, 'worktree', 'list').split('\n')).toHaveLength(1 + TASKS.length);
    expect(bus(TASKS[0]).map((m) => m.body)).toEqual([expect.stringContaining('re-verifying the merge of conductor/'), expect.stringContaining('merged conductor/')]);
    for (const t of TASKS) expect(readWorktreeRecord(taskDir(t))?.merge_status).toBe('merged');
    // a client that asks again learns it is merged, and nothing merges twice
    expect(await mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]), config: config(verify) })).toMatchObject({ already_merged: true });
    expect(mergesOn('main')).toHaveLength(TASKS.length);
  });

  it('a merge that reached the base branch just before the crash is recorded as merged, never merged twice', async () => {
    await mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]) });
    // the crash came after the base moved but before the queue and WORKTREE.yaml said so
    const rec = readWorktreeRecord(taskDir(TASKS[0]))!;
    writeFileSync(join(taskDir(TASKS[0]), 'WORKTREE.yaml'), stringify({ ...rec, merge_status: undefined, merged_commit: undefined, merged_at: undefined }));
    writeQueue(['verifying'], `echo "$JRUN_TASK_ID" >> ${log}`);
    await resumeMergeQueues([repo], { writers: loopParts.writers });
    // the merge commit the interrupted attempt made is found and named (issue #31: it was recorded as `nothing`, without a commit)
    const commit = gitSync(repo, 'rev-parse', 'main');
    expect(readMergeQueue(repo)[0]).toMatchObject({ state: 'merged', outcome: 'merged', commit, attempts: 2 });
    expect(mergesOn('main')).toHaveLength(1);
    expect(existsSync(log)).toBe(false);
    expect(readWorktreeRecord(taskDir(TASKS[0]))).toMatchObject({ merge_status: 'merged', merged_commit: commit });
    expect(bus(TASKS[0]).pop()?.body).toBe(`merged conductor/${TASKS[0]} into main (${commit}): found merged by the interrupted attempt 1, not merged again`);
  });

  it('a merge recorded on the task but not yet in the queue when its owner died is finished by the next merge of that task', async () => {
    await mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]) });
    const commit = readWorktreeRecord(taskDir(TASKS[0]))!.merged_commit!;
    // the owner died after WORKTREE.yaml said merged, before the queue did
    writeQueue(['verifying'], `echo "$JRUN_TASK_ID" >> ${log}`);
    // issue #31: this answered "already merged" and left the entry verifying
    expect(await mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]) })).toMatchObject({ already_merged: false, commit });
    expect(readMergeQueue(repo)[0]).toMatchObject({ state: 'merged', outcome: 'merged', commit, attempts: 2 });
    expect(bus(TASKS[0]).pop()?.body).toBe(`found conductor/${TASKS[0]} merged into main (${commit}) by the interrupted attempt 1; recorded, not merged again`);
    expect(mergesOn('main')).toHaveLength(1);
    expect(existsSync(log)).toBe(false);
    expect(await mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]) })).toMatchObject({ already_merged: true, commit });
  });

  it('asking twice while queued keeps one entry; an entry that no longer matches its task fails alone', async () => {
    writeQueue(['queued', 'queued'], '');
    const rec = readWorktreeRecord(taskDir(TASKS[0]))!;
    writeFileSync(join(taskDir(TASKS[0]), 'WORKTREE.yaml'), stringify({ ...rec, branch: 'conductor/someone-else' }));
    // TASKS[1] asks again: it keeps its place behind TASKS[0] (no second entry)
    await expect(mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[1]) })).resolves.toMatchObject({ already_merged: false });
    const queue = readMergeQueue(repo);
    expect(queue.map((e) => [e.seq, e.task_id, e.state, e.outcome])).toEqual([[1, TASKS[0], 'failed', 'error'], [2, TASKS[1], 'merged', 'merged']]);
    expect(queue[0].detail).toContain('does not match the queued merge');
    expect(mergesOn('main')).toEqual([`Merge conductor/${TASKS[1]} (${TASKS[1]})`]);
  });

  it('a failing verify is recorded on the entry and reported to the caller; the next merge still runs', async () => {
    const verify = `echo "$JRUN_TASK_ID" >> ${log}; test "$JRUN_TASK_ID" != ${TASKS[0]}`;
    const first = mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]), config: config(verify) }).catch((e: unknown) => e);
    const second = mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[1]), config: config(verify) });
    expect(isWorktreeError(await first, 'MERGE_FAILED')).toBe(true);
    await second;
    expect(readMergeQueue(repo).map((e) => [e.task_id, e.state, e.outcome]).sort()).toEqual([[TASKS[0], 'failed', 'failed'], [TASKS[1], 'merged', 'merged']]);
  });

  it('a merge still queued when its wait times out is withdrawn (recorded), nothing merged', async () => {
    const err = await withFileLock(join(repo, '.git', 'conductor-merge.lock'), { timeoutMs: 1000 }, () =>
      mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]), queueTimeoutMs: 200, pollMs: 20 }).catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('LOCK_TIMEOUT');
    expect((err as Error).message).toContain('nothing merged');
    expect(readMergeQueue(repo).map((e) => [e.state, e.outcome])).toEqual([['failed', 'timeout']]);
    expect(mergesOn('main')).toEqual([]);
    // asked again later, it is queued afresh and merges
    await mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]) });
    expect(readMergeQueue(repo).map((e) => [e.seq, e.state])).toEqual([[1, 'failed'], [2, 'merged']]);
  });

  it('a verify command runs in its own process group; what it leaves running is killed when it exits', async () => {
    const pidFile = join(dir, 'bg.pid');
    const verify = `sleep 300 & echo $! > ${pidFile}; exit 0`;
    await mergeTask({ writers: loopParts.writers, taskDir: taskDir(TASKS[0]), config: config(verify) });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(`background process ${pid} of the verify command to be gone`, () => !processAlive(pid));
    expect(readMergeQueue(repo)[0]).toMatchObject({ state: 'merged' });
  });

  it('what a verify command left running dies with an owner killed right after the command exited', async () => {
    const pidFile = join(dir, 'bg.pid');
    // the watchdog as runShell starts it, with this test as its owner
    const watchdog = spawn('/bin/sh', ['-c', OWNER_WATCHDOG, 'conductor-watchdog', `sleep 300 >/dev/null 2>&1 & echo $! > ${pidFile}; exit 0`], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    const pid = await waitFor('the straggler to start', () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')));
    try {
      expect(await exitOf(watchdog)).toBe(0);
      // the owner dies before it can kill the group (issue #31: the watchdog had killed its watcher, so the straggler lived on)
      watchdog.stdin!.destroy();
      await waitFor(`straggler ${pid} to die with its owner`, () => !processAlive(pid), 10_000);
    } finally {
      if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
