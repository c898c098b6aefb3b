import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loopParts } from '../../utils/loop-parts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { AppConfig, RunsLayout } from '@app/storage';
import { ensureTaskWorktree, mergeTask, readWorktreeRecord, taskDiff, isWorktreeError } from '@app/worktree';
import { gitSync, makeRepo } from '../../utils/git-repo';

const P = 'proj';
const T1 = 'task-20260101-000001-alpha';
const T2 = 'task-20260101-000002-beta';

function config(verify?: string): AppConfig {
  return { agents: {}, defaults: {} as AppConfig['defaults'], api: {} as AppConfig['api'], storage: {} as AppConfig['storage'], worktree: verify ? { verify } : {} };
}

describe('worktree merge queue (real git)', () => {
  let dir: string;
  let repo: string;
  let layout: RunsLayout;
  const taskDir = (t: string): string => layout.taskDir(P, t);
  const start = (t: string) => ensureTaskWorktree({ projectId: P, taskId: t, taskDir: taskDir(t), request: { repo } });
  const bus = (t: string) => readMessages(join(taskDir(t), 'TASK-MESSAGE-BUS.md'));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wt-merge-'));
    repo = makeRepo(join(dir, 'repo'));
    layout = new RunsLayout(join(dir, 'runs'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('two tasks change the same file in isolation; the first merges, the second conflicts until rebased', async () => {
    const [a, b] = await Promise.all([start(T1), start(T2)]);
    expect(a.path).toBe(join(repo, '.conductor', 'worktrees', T1));
    expect(b.branch).toBe(`conductor/${T2}`);
    const base = gitSync(repo, 'rev-parse', 'main');
    expect(a.base_commit).toBe(base);
    expect(a.base_branch).toBe('main');
    expect(a.port).toBeGreaterThan(0);
    expect(b.port).not.toBe(a.port);

    writeFileSync(join(a.path, 'shared.txt'), 'line one\nALPHA\nline three\n');
    writeFileSync(join(b.path, 'shared.txt'), 'line one\nBETA\nline three\n');
    writeFileSync(join(b.path, 'new.txt'), 'beta only\n');
    // the main checkout is untouched and clean (.conductor/ is excluded)
    expect(readFileSync(join(repo, 'shared.txt'), 'utf8')).toBe('line one\nline two\nline three\n');
    expect(gitSync(repo, 'status', '--porcelain')).toBe('');

    const da = await taskDiff(taskDir(T1));
    const db = await taskDiff(taskDir(T2));
    expect(da.files.map((f) => [f.path, f.status])).toEqual([['shared.txt', 'modified']]);
    expect(da.files[0].hunks[0].lines).toEqual([' line one', '-line two', '+ALPHA', ' line three']);
    expect(db.files.map((f) => [f.path, f.status])).toEqual([['new.txt', 'added'], ['shared.txt', 'modified']]);
    expect(db.patch).toContain('+BETA');
    expect(db.patch).not.toContain('ALPHA');
    // the diff staged nothing in the worktree's own index
    expect(gitSync(b.path, 'diff', '--cached', '--name-only')).toBe('');

    const merged = await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T1) });
    expect(merged.commit).toBe(gitSync(repo, 'rev-parse', 'main'));
    expect(readFileSync(join(repo, 'shared.txt'), 'utf8')).toContain('ALPHA');
    expect(readWorktreeRecord(taskDir(T1))?.merge_status).toBe('merged');

    const mainBefore = gitSync(repo, 'rev-parse', 'main');
    const err = await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T2) }).catch((e: unknown) => e);
    expect(isWorktreeError(err, 'MERGE_CONFLICT')).toBe(true);
    expect((err as Error).message).toContain('shared.txt');
    expect(gitSync(repo, 'rev-parse', 'main')).toBe(mainBefore);
    expect(gitSync(repo, 'status', '--porcelain')).toBe('');
    const rec = readWorktreeRecord(taskDir(T2));
    expect(rec?.merge_status).toBe('conflict');
    expect(rec?.merge_files).toEqual(['shared.txt']);
    const conflict = bus(T2).find((m) => m.type === 'MERGE_CONFLICT');
    expect(conflict?.body).toContain('- shared.txt');

    // the agent rebases onto main and resolves the conflict
    const rebase = () => gitSync(b.path, 'rebase', 'main');
    expect(rebase).toThrow();
    writeFileSync(join(b.path, 'shared.txt'), 'line one\nALPHA\nBETA\nline three\n');
    gitSync(b.path, 'add', 'shared.txt');
    gitSync(b.path, '-c', 'core.editor=true', 'rebase', '--continue');
    const ok = await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T2) });
    expect(ok.commit).toBe(gitSync(repo, 'rev-parse', 'main'));
    expect(readFileSync(join(repo, 'shared.txt'), 'utf8')).toBe('line one\nALPHA\nBETA\nline three\n');
    expect(readFileSync(join(repo, 'new.txt'), 'utf8')).toBe('beta only\n');
    expect(readWorktreeRecord(taskDir(T2))?.merge_status).toBe('merged');
  });

  it('a red verify command blocks the merge, says why and leaves the base branch alone', async () => {
    const a = await start(T1);
    writeFileSync(join(a.path, 'shared.txt'), 'broken\n');
    const before = gitSync(repo, 'rev-parse', 'main');
    const verify = 'grep -q "line one" shared.txt || { echo "verify: shared.txt lost line one" >&2; exit 3; }';
    const err = await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T1), config: config(verify) }).catch((e: unknown) => e);
    expect(isWorktreeError(err, 'MERGE_FAILED')).toBe(true);
    expect((err as Error).message).toContain('exit code 3');
    expect(gitSync(repo, 'rev-parse', 'main')).toBe(before);
    expect(readFileSync(join(repo, 'shared.txt'), 'utf8')).toBe('line one\nline two\nline three\n');
    const failed = bus(T1).find((m) => m.type === 'MERGE_FAILED');
    expect(failed?.body).toContain('verify: shared.txt lost line one');
    expect(failed?.body).toContain('- shared.txt');
    expect(readWorktreeRecord(taskDir(T1))?.merge_status).toBe('failed');
    // no scratch worktree is left behind
    expect(gitSync(repo, 'worktree', 'list').split('\n')).toHaveLength(2);

    writeFileSync(join(a.path, 'shared.txt'), 'line one\nfixed\n');
    await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T1), config: config(verify) });
    expect(readFileSync(join(repo, 'shared.txt'), 'utf8')).toBe('line one\nfixed\n');
  });

  it('merges run one at a time per repository', async () => {
    const a = await start(T1);
    const b = await start(T2);
    writeFileSync(join(a.path, 'a.txt'), 'a\n');
    writeFileSync(join(b.path, 'b.txt'), 'b\n');
    const log = join(dir, 'verify.log');
    // each verify records its start and end; overlapping merges would interleave them
    const verify = `echo start >> ${log}; sleep 0.3; echo end >> ${log}`;
    await Promise.all([mergeTask({ writers: loopParts.writers, taskDir: taskDir(T1), config: config(verify) }), mergeTask({ writers: loopParts.writers, taskDir: taskDir(T2), config: config(verify) })]);
    expect(readFileSync(log, 'utf8')).toBe('start\nend\nstart\nend\n');
    expect(existsSync(join(repo, 'a.txt')) && existsSync(join(repo, 'b.txt'))).toBe(true);
  });

  it('refuses a task started from a commit (no base branch) without touching anything', async () => {
    const sha = gitSync(repo, 'rev-parse', 'HEAD');
    await ensureTaskWorktree({ projectId: P, taskId: T1, taskDir: taskDir(T1), request: { repo, base: sha } });
    const err = await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T1) }).catch((e: unknown) => e);
    expect(isWorktreeError(err, 'MERGE_FAILED')).toBe(true);
    expect(gitSync(repo, 'rev-parse', 'main')).toBe(sha);
  });
});
