import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeTaskWorktree, taskDiff } from '@app/worktree';
import { gitSync, makeRepo } from '../../utils/git-repo';

/** Issue #29: values read from a WORKTREE.yaml are never options to git nor a licence to delete. */
describe('WORKTREE.yaml values are checked before use (real git)', () => {
  let dir: string;
  let repo: string;
  let taskDir: string;
  const T = 'task-20260101-000001-hostile';
  const record = (fields: Record<string, string>) =>
    writeFileSync(
      join(taskDir, 'WORKTREE.yaml'),
      Object.entries({ project_id: 'p', task_id: T, repo, path: join(repo, '.conductor', 'worktrees', T), branch: `conductor/${T}`, base_commit: gitSync(repo, 'rev-parse', 'HEAD'), base_branch: 'main', ...fields })
        .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
        .join('\n') + '\n',
    );
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wt-record-'));
    repo = makeRepo(join(dir, 'repo'));
    taskDir = join(dir, 'runs', 'p', T);
    mkdirSync(taskDir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('removing a task worktree never deletes a folder outside <repo>/.conductor named by the record', async () => {
    const victim = join(dir, 'precious');
    mkdirSync(victim);
    writeFileSync(join(victim, 'keep.txt'), 'keep');
    record({ path: victim });
    await expect(removeTaskWorktree(taskDir)).rejects.toThrow(/^WORKTREE\.yaml: path "[^"]+precious" is not inside [^\n]+\.conductor; nothing removed$/);
    expect(existsSync(join(victim, 'keep.txt'))).toBe(true);
  });

  it('a branch beginning with "-" is refused before git sees it (diff and branch deletion)', async () => {
    const planted = join(dir, 'planted');
    record({ branch: `--output=${planted}`, path: join(repo, '.conductor', 'worktrees', 'gone') });
    await expect(taskDiff(taskDir)).rejects.toThrow(/^WORKTREE\.yaml: branch "--output=[^\n]+is not a valid git ref$/);
    await expect(removeTaskWorktree(taskDir, { deleteBranch: true })).rejects.toThrow(/not a valid git ref/);
    expect(existsSync(planted)).toBe(false);
  });
});
