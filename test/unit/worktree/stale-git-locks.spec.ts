/**
 * The lock files a merge driver's git leaves when its process group is SIGKILLed mid-operation
 * (libs/worktree/src/stale-git-locks.ts): removed on the next attempt unless a process holds them.
 * A real repository, a real task worktree and a real process holding a lock open.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileHeldOpen } from '@app/storage';
import { removeStaleGitLocks } from '../../../libs/worktree/src/stale-git-locks';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { waitFor } from '../../utils/wait';

describe('stale git locks of an interrupted merge', () => {
  let dir: string;
  let repo: string;
  let task: string;
  let holder: ChildProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stale-locks-'));
    repo = makeRepo(join(dir, 'repo'));
    task = join(dir, 'task');
    gitSync(repo, 'worktree', 'add', '-q', '-b', 'conductor/t1', task);
  });
  afterEach(() => {
    holder?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('removes the locks no process holds (index of the base checkout and the task worktree, the branch refs), keeps a held one', async () => {
    const checkoutIndex = join(repo, '.git', 'index.lock');
    const taskIndex = gitSync(task, 'rev-parse', '--path-format=absolute', '--git-path', 'index.lock');
    const baseRef = join(repo, '.git', 'refs', 'heads', 'main.lock');
    const taskRef = join(repo, '.git', 'refs', 'heads', 'conductor', 't1.lock');
    for (const f of [checkoutIndex, taskIndex, baseRef, taskRef]) writeFileSync(f, '');
    // a live git's lock: some process has it open
    holder = spawn('sh', ['-c', 'exec 3<"$0"; echo ready; exec sleep 30', taskRef], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((r) => holder!.stdout!.once('data', r));
    await waitFor('the holder has the lock open', () => fileHeldOpen(taskRef));
    expect(fileHeldOpen(baseRef)).toBe(false);

    const removed = await removeStaleGitLocks(repo, task, ['refs/heads/main', 'refs/heads/conductor/t1']);
    expect(removed.sort()).toEqual([checkoutIndex, taskIndex, baseRef].sort());
    expect([checkoutIndex, taskIndex, baseRef].filter((f) => existsSync(f))).toEqual([]);
    expect(existsSync(taskRef)).toBe(true);
    // git works again where the locks were
    writeFileSync(join(repo, 'new.txt'), 'x\n');
    gitSync(repo, 'add', 'new.txt');
    gitSync(repo, 'commit', '-q', '-m', 'after the stale lock');
  });

  it('finds nothing to remove when no git died', async () => {
    expect(await removeStaleGitLocks(repo, task, ['refs/heads/main', 'refs/heads/conductor/t1'])).toEqual([]);
  });
});
