import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pushTaskBranch, isWorktreeError } from '@app/worktree';
import { gitSync, makeRepo } from '../../utils/git-repo';

describe('pushTaskBranch (real git, a local bare repository as the remote)', () => {
  let dir: string;
  let repo: string;
  let remote: string;
  const branch = 'conductor/task-20260101-000001-alpha';

  const commitOn = (cwd: string, file: string, text: string): void => {
    writeFileSync(join(cwd, file), text);
    gitSync(cwd, 'add', file);
    gitSync(cwd, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', `change ${file}`);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'push-branch-'));
    repo = makeRepo(join(dir, 'repo'));
    remote = join(dir, 'remote.git');
    gitSync(dir, 'init', '-q', '--bare', remote);
    gitSync(repo, 'branch', branch);
    gitSync(repo, 'checkout', '-q', branch);
    commitOn(repo, 'a.txt', 'one\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('pushes the branch, reports nothing to send the second time, and moves it forward after a new commit', async () => {
    const first = await pushTaskBranch(repo, remote, branch);
    expect(first).toEqual({ remote, branch, commit: gitSync(repo, 'rev-parse', branch), updated: true });
    expect(gitSync(remote, 'rev-parse', `refs/heads/${branch}`)).toBe(first.commit);
    expect(await pushTaskBranch(repo, remote, branch)).toEqual({ ...first, updated: false });
    commitOn(repo, 'b.txt', 'two\n');
    const second = await pushTaskBranch(repo, remote, branch);
    expect(second.updated).toBe(true);
    expect(second.commit).not.toBe(first.commit);
    expect(gitSync(remote, 'rev-parse', `refs/heads/${branch}`)).toBe(second.commit);
  });

  it('never overwrites a remote branch that diverged', async () => {
    await pushTaskBranch(repo, remote, branch);
    const other = join(dir, 'other');
    gitSync(dir, 'clone', '-q', '--branch', branch, remote, other);
    commitOn(other, 'c.txt', 'theirs\n');
    gitSync(other, 'push', '-q', 'origin', branch);
    const theirs = gitSync(remote, 'rev-parse', `refs/heads/${branch}`);
    commitOn(repo, 'b.txt', 'ours\n');
    const err = await pushTaskBranch(repo, remote, branch).catch((e: unknown) => e);
    expect(isWorktreeError(err) && err.code).toBe('WORKTREE');
    expect((err as Error).message).toBe(`git push to ${remote} failed: the remote branch ${branch} has commits the task's branch lacks (not overwritten)`);
    expect(gitSync(remote, 'rev-parse', `refs/heads/${branch}`)).toBe(theirs);
  });

  it('refuses a missing branch and an option-like remote as bad input', async () => {
    await expect(pushTaskBranch(repo, remote, 'conductor/nope')).rejects.toMatchObject({ code: 'INVALID_INPUT', message: `branch "conductor/nope" does not exist in ${repo}` });
    await expect(pushTaskBranch(repo, '--upload-pack=x', branch)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(gitSync(dir, 'ls-remote', '--heads', remote)).toBe('');
  });
});
