import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo } from '@app/storage';
import { gitSync } from '../../utils/git-repo';
import { P, T1, T2, WorktreeSandbox } from './helpers';

const ORIGINAL = 'line one\nline two\nline three\n';

function onlyRun(sb: WorktreeSandbox, task: string): string {
  const runs = readdirSync(join(sb.taskDir(task), 'runs'));
  expect(runs).toHaveLength(1);
  return join(sb.taskDir(task), 'runs', runs[0]);
}

describe('run-agent task --worktree, diff and merge (real git, built CLI)', () => {
  let sb: WorktreeSandbox;
  afterEach(() => sb.cleanup());

  it('parallel tasks change one file in their own worktrees; merge, conflict, rebase, merge', async () => {
    sb = new WorktreeSandbox();
    const [a, b] = await Promise.all([sb.task(T1, 'ALPHA'), sb.task(T2, 'BETA')]);
    expect([a.code, a.stderr]).toEqual([0, expect.stringContaining('DONE: task completed')]);
    expect(a.stderr).not.toMatch(/Error:|WARNING/);
    expect([b.code, b.stderr]).toEqual([0, expect.stringContaining('DONE: task completed')]);
    expect(b.stderr).not.toMatch(/Error:|WARNING/);

    // the main checkout is untouched until merge
    expect(sb.read(join(sb.repo, 'shared.txt'))).toBe(ORIGINAL);
    expect(gitSync(sb.repo, 'status', '--porcelain')).toBe('');
    const base = gitSync(sb.repo, 'rev-parse', 'main');

    const ports: string[] = [];
    for (const [task, text] of [[T1, 'ALPHA'], [T2, 'BETA']]) {
      const wt = join(sb.repo, '.conductor', 'worktrees', task);
      const runDir = onlyRun(sb, task);
      const info = readRunInfo(join(runDir, 'run-info.yaml'));
      expect(info).toMatchObject({ status: 'completed', cwd: wt, worktree: wt, branch: `conductor/${task}`, base_commit: base });
      const [cwd, jrunWorktree, port] = sb.read(join(runDir, 'where.txt')).trimEnd().split('\n');
      expect([cwd, jrunWorktree]).toEqual([wt, wt]);
      expect(Number(port)).toBeGreaterThan(0);
      ports.push(port);
      expect(sb.read(join(wt, 'shared.txt'))).toBe(`line one\n${text}\nline three\n`);

      const diff = await sb.run(['diff', ...sb.scope(task), '--json']);
      expect(diff.code).toBe(0);
      const d = JSON.parse(diff.stdout) as { files: { path: string; hunks: { lines: string[] }[] }[]; base_commit: string };
      expect(d.base_commit).toBe(base);
      expect(d.files.map((f) => f.path)).toEqual(['shared.txt']);
      expect(d.files[0].hunks[0].lines).toEqual([' line one', '-line two', `+${text}`, ' line three']);
    }
    expect(ports[0]).not.toBe(ports[1]);

    const status = await sb.run(['status', '--root', sb.root, '--project', P, '--json']);
    const rows = (JSON.parse(status.stdout) as { tasks: { task_id: string; branch?: string; base_commit?: string }[] }).tasks;
    expect(rows.map((r) => [r.task_id, r.branch, r.base_commit])).toEqual([
      [T1, `conductor/${T1}`, base],
      [T2, `conductor/${T2}`, base],
    ]);

    const first = await sb.run(['merge', ...sb.scope(T1)]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^merged conductor/${T1} into main \\([0-9a-f]{40}\\)\\n$`));
    expect(sb.read(join(sb.repo, 'shared.txt'))).toBe('line one\nALPHA\nline three\n');
    const afterFirst = gitSync(sb.repo, 'rev-parse', 'main');

    const second = await sb.run(['merge', ...sb.scope(T2)]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('Error: merge of conductor/');
    expect(second.stderr).toContain('shared.txt');
    expect(gitSync(sb.repo, 'rev-parse', 'main')).toBe(afterFirst);
    expect(sb.read(join(sb.repo, 'shared.txt'))).toBe('line one\nALPHA\nline three\n');
    const conflict = sb.bus(T2).filter((m) => m.type === 'MERGE_CONFLICT');
    expect(conflict).toHaveLength(1);
    expect(conflict[0].body).toContain('- shared.txt');
    const table = await sb.run(['status', '--root', sb.root, '--project', P]);
    expect(table.stdout).toMatch(new RegExp(`${T2} .*conductor/${T2}\\s+conflict`));

    // the agent (here: the test) rebases the branch onto main and resolves the conflict
    const wt2 = join(sb.repo, '.conductor', 'worktrees', T2);
    expect(() => gitSync(wt2, 'rebase', 'main')).toThrow();
    writeFileSync(join(wt2, 'shared.txt'), 'line one\nALPHA\nBETA\nline three\n');
    gitSync(wt2, 'add', 'shared.txt');
    gitSync(wt2, '-c', 'core.editor=true', 'rebase', '--continue');
    const again = await sb.run(['merge', ...sb.scope(T2)]);
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(sb.read(join(sb.repo, 'shared.txt'))).toBe('line one\nALPHA\nBETA\nline three\n');
    const repeat = await sb.run(['merge', ...sb.scope(T2)]);
    expect(repeat.stdout).toBe(`conductor/${T2} is already merged into main\n`);
  });

  it('a red verify command blocks the merge and says why', async () => {
    sb = new WorktreeSandbox('worktree:\n  verify: "grep -q BETA shared.txt || { echo verify wants BETA; exit 4; }"\n');
    expect((await sb.task(T1, 'ALPHA')).code).toBe(0);
    const before = gitSync(sb.repo, 'rev-parse', 'main');
    const r = await sb.run(['merge', ...sb.scope(T1), '--config', sb.config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('verify command');
    expect(r.stderr).toContain('exit code 4');
    expect(gitSync(sb.repo, 'rev-parse', 'main')).toBe(before);
    const failed = sb.bus(T1).find((m) => m.type === 'MERGE_FAILED');
    expect(failed?.body).toContain('verify wants BETA');
  });

  it('sub-agent jobs run in the worktree of the task that started them, or in their own with --worktree', async () => {
    sb = new WorktreeSandbox();
    expect((await sb.task(T1, 'ALPHA')).code).toBe(0);
    const wt1 = join(sb.repo, '.conductor', 'worktrees', T1);
    const child = 'task-20260101-120000-child';
    const job = (extra: string[]) =>
      sb.run(['job', '--root', sb.root, '--config', sb.config, '--project', P, '--task', child, '--agent', 'writer', '--prompt', 'sub', ...extra], {
        env: { WRITE_TEXT: 'CHILD', JRUN_TASK_FOLDER: sb.taskDir(T1) },
      });
    expect((await job([])).code).toBe(0);
    const inherited = readRunInfo(join(onlyRun(sb, child), 'run-info.yaml'));
    expect(inherited).toMatchObject({ cwd: wt1, worktree: wt1, branch: `conductor/${T1}` });

    const own = 'task-20260101-120000-own';
    const r = await sb.run(['job', '--root', sb.root, '--config', sb.config, '--project', P, '--task', own, '--agent', 'writer', '--prompt', 'sub', '--worktree', '--repo', sb.repo], {
      env: { WRITE_TEXT: 'OWN', JRUN_TASK_FOLDER: sb.taskDir(T1) },
    });
    expect(r.code).toBe(0);
    const ownWt = join(sb.repo, '.conductor', 'worktrees', own);
    expect(readRunInfo(join(onlyRun(sb, own), 'run-info.yaml'))).toMatchObject({ cwd: ownWt, branch: `conductor/${own}` });
    expect(sb.read(join(ownWt, 'shared.txt'))).toContain('OWN');
  });

  it('bad --repo, --base or --paths is a usage error that leaves nothing behind: no task folder, no run, repository as it was (#29)', async () => {
    sb = new WorktreeSandbox();
    const exclude = join(sb.repo, '.git', 'info', 'exclude');
    const excludeBefore = existsSync(exclude) ? sb.read(exclude) : undefined;
    const notRepo = await sb.task(T1, 'X', ['--repo', sb.root]);
    expect([notRepo.code, notRepo.stdout]).toEqual([2, '']);
    expect(notRepo.stderr).toMatch(/^Error: not a git repository: [^\n]+\n$/);
    const badBase = await sb.task(T2, 'X', ['--base', 'no-such-branch']);
    expect([badBase.code, badBase.stdout]).toEqual([2, '']);
    expect(badBase.stderr).toMatch(/^Error: --base "no-such-branch" is not a commit in [^\n]+\n$/);
    const treeBase = await sb.task(T2, 'X', ['--base', 'main^{tree}']);
    expect([treeBase.code, treeBase.stderr]).toEqual([2, expect.stringContaining('is not a commit')]);
    const badPaths = await sb.task(T2, 'X', ['--paths', '../outside']);
    expect([badPaths.code, badPaths.stderr]).toEqual([2, expect.stringContaining('invalid path "../outside"')]);
    const job = await sb.run(['job', '--root', sb.root, '--config', sb.config, '--project', P, '--task', T2, '--agent', 'writer', '--prompt', 'x', '--worktree', '--repo', sb.repo, '--base', 'no-such-branch']);
    expect([job.code, job.stderr]).toEqual([2, expect.stringContaining('--base "no-such-branch" is not a commit')]);
    expect(existsSync(sb.root) ? readdirSync(sb.root) : []).toEqual([]);
    expect(existsSync(join(sb.repo, '.conductor'))).toBe(false);
    expect(existsSync(exclude) ? sb.read(exclude) : undefined).toBe(excludeBefore);
    expect(gitSync(sb.repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    expect(gitSync(sb.repo, 'branch', '--list', 'conductor/*')).toBe('');
  });

  it('gc removes the merged task worktree and branch, keeps the unmerged one unless --force', async () => {
    sb = new WorktreeSandbox();
    const [a, b] = await Promise.all([sb.task(T1, 'ALPHA'), sb.task(T2, 'BETA')]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect((await sb.run(['merge', ...sb.scope(T1)])).code).toBe(0);
    const wt = (t: string) => join(sb.repo, '.conductor', 'worktrees', t);
    const gc = await sb.run(['gc', '--root', sb.root, '--older-than', '0s', '--json']);
    expect(gc.code).toBe(0);
    const report = JSON.parse(gc.stdout) as { worktrees: { removed: { task_id: string; reason: string }[]; kept_unmerged: string[] } };
    expect(report.worktrees.removed).toEqual([{ path: wt(T1), task_id: T1, reason: 'merged' }]);
    expect(report.worktrees.kept_unmerged).toEqual([wt(T2)]);
    expect(gitSync(sb.repo, 'branch', '--format=%(refname:short)', '--list', 'conductor/*')).toBe(`conductor/${T2}`);
    const forced = await sb.run(['gc', '--root', sb.root, '--older-than', '0s', '--force']);
    expect(forced.stdout).toContain(`removed worktree ${wt(T2)} (forced)`);
    expect(gitSync(sb.repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    expect(gitSync(sb.repo, 'branch', '--format=%(refname:short)', '--list', 'conductor/*')).toBe(`conductor/${T2}`);
  });
});
