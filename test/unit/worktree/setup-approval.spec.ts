import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { approvalsFile, ensureTaskWorktree, readApprovals, readWorktreeRecord, recordApprovals, removeTaskWorktree, scriptsAtCommit, isWorktreeError } from '@app/worktree';
import { gitSync, makeRepo } from '../../utils/git-repo';

const P = 'proj';
const T1 = 'task-20260101-000001-alpha';
const T2 = 'task-20260101-000002-beta';
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('approval of repository setup scripts (real git)', () => {
  let dir: string;
  let repo: string;
  let layout: RunsLayout;
  let log: string;
  const saved = process.env.CONDUCTOR_STATE_DIR;
  const taskDir = (t: string): string => layout.taskDir(P, t);
  const start = (t: string) => ensureTaskWorktree({ projectId: P, taskId: t, taskDir: taskDir(t), request: { repo } });

  function commitScript(name: string, text: string): void {
    writeFileSync(join(repo, name), text);
    gitSync(repo, 'add', '-A');
    gitSync(repo, 'commit', '-q', '-m', `add ${name}`);
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wt-approve-'));
    repo = makeRepo(join(dir, 'repo'));
    layout = new RunsLayout(join(dir, 'runs'));
    log = join(dir, 'ran.log');
    process.env.CONDUCTOR_STATE_DIR = join(dir, 'state');
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.CONDUCTOR_STATE_DIR;
    else process.env.CONDUCTOR_STATE_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unapproved script fails the start closed, naming it, its sha256 and the approve command; nothing runs or is created', async () => {
    const text = `echo "setup $JRUN_WORKTREE" >> ${log}\n`;
    commitScript('.conductor-setup.sh', text);
    const err = await start(T1).catch((e: unknown) => e);
    expect(isWorktreeError(err, 'INVALID_INPUT')).toBe(true);
    const msg = (err as Error).message;
    expect(msg).toContain(`.conductor-setup.sh (sha256 ${sha(text)})`);
    expect(msg).toContain(`run-agent approve-setup --repo ${repo} --ref ${gitSync(repo, 'rev-parse', 'HEAD')} --sha256 ${sha(text)}`);
    expect(msg).not.toContain('\n');
    expect(existsSync(log)).toBe(false);
    expect(existsSync(join(repo, '.conductor', 'worktrees', T1))).toBe(false);
    expect(readWorktreeRecord(taskDir(T1))).toBeUndefined();
  });

  it('an approved script runs once in the worktree; a changed script needs approval again', async () => {
    commitScript('.conductor-setup.sh', `echo "setup $(pwd)" >> ${log}\n`);
    await recordApprovals(repo, await scriptsAtCommit(repo, 'HEAD'));
    expect(readApprovals()).toEqual([expect.objectContaining({ repo, path: '.conductor-setup.sh' })]);
    const rec = await start(T1);
    expect(readFileSync(log, 'utf8')).toBe(`setup ${rec.path}\n`);
    expect(readWorktreeRecord(taskDir(T1))?.setup_script).toEqual({ path: '.conductor-setup.sh', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const changed = `echo changed >> ${log}\n`;
    commitScript('.conductor-setup.sh', changed);
    const err = await start(T2).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`sha256 ${sha(changed)}) in ${repo} is changed since its approval`);
    expect(readFileSync(log, 'utf8')).toBe(`setup ${rec.path}\n`);
  });

  it('the script as checked out in the worktree is checked again: a changed or symlinked file there is not run', async () => {
    commitScript('.conductor-setup.sh', `echo ok >> ${log}\nexit 3\n`);
    await recordApprovals(repo, await scriptsAtCommit(repo, 'HEAD'));
    // the approved script fails: the worktree exists, setup is not done
    await expect(start(T1)).rejects.toThrow(/setup script \.conductor-setup\.sh failed with exit code 3/);
    const wt = join(repo, '.conductor', 'worktrees', T1);
    writeFileSync(join(wt, '.conductor-setup.sh'), `echo tampered >> ${log}\n`);
    await expect(start(T1)).rejects.toThrow(/changed since its approval/);
    rmSync(join(wt, '.conductor-setup.sh'));
    symlinkSync('/etc/hostname', join(wt, '.conductor-setup.sh'));
    await expect(start(T1)).rejects.toThrow(/is a symbolic link \(refused\)/);
    // a FIFO in its place is refused at once (it used to block the start forever on open)
    rmSync(join(wt, '.conductor-setup.sh'));
    execFileSync('mkfifo', [join(wt, '.conductor-setup.sh')]);
    await expect(start(T1)).rejects.toThrow(/setup script [^\n]*\.conductor-setup\.sh: not a regular file$/);
    expect(readFileSync(log, 'utf8')).toBe('ok\n');
  });

  it('an unapproved teardown script is not run and keeps the worktree', async () => {
    commitScript('.conductor-teardown.sh', `echo teardown >> ${log}\n`);
    await recordApprovals(repo, await scriptsAtCommit(repo, 'HEAD'));
    const rec = await start(T1);
    writeFileSync(join(rec.path, '.conductor-teardown.sh'), `echo evil >> ${log}\n`);
    await expect(removeTaskWorktree(taskDir(T1))).rejects.toThrow(/teardown script \.conductor-teardown\.sh \(sha256 [0-9a-f]{64}\).*changed since its approval/);
    expect(existsSync(rec.path)).toBe(true);
    gitSync(rec.path, 'checkout', '--', '.conductor-teardown.sh');
    await removeTaskWorktree(taskDir(T1));
    expect(readFileSync(log, 'utf8')).toBe('teardown\n');
    expect(existsSync(rec.path)).toBe(false);
  });

  it('approvals are bound to the repository: the same script elsewhere is not approved', async () => {
    commitScript('.conductor-setup.sh', 'true\n');
    const other = makeRepo(join(dir, 'other'));
    writeFileSync(join(other, '.conductor-setup.sh'), 'true\n');
    gitSync(other, 'add', '-A');
    gitSync(other, 'commit', '-q', '-m', 'script');
    await recordApprovals(other, await scriptsAtCommit(other, 'HEAD'));
    await expect(start(T1)).rejects.toThrow(/is not approved/);
    expect(readFileSync(approvalsFile(), 'utf8')).toContain(other);
  });
});
