import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWorktreeRecord, runTask } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { agentEnv, PROJECT, taskId, tempRoot } from '../runner/helpers';

/*
 * A task start resolves its worktree's repository and base once: the door (checkTaskWorktree)
 * resolves them and passes them down to the worktree's creation. Every git call of the runner goes
 * through a logging `git` first on PATH (real git behind it), so a second resolution shows.
 */
describe('worktree start: repository and base resolved once', () => {
  const tmp = tempRoot();
  const savedPath = process.env.PATH;
  let log: string;

  beforeAll(() => {
    const dir = join(tmp.root, '..');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const bin = join(dir, 'git-log-bin');
    mkdirSync(bin, { recursive: true });
    log = join(dir, 'git-calls.log');
    writeFileSync(join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    process.env.PATH = `${bin}:${savedPath}`;
  });
  afterAll(() => {
    process.env.PATH = savedPath;
    tmp.cleanup();
  });

  it('runTask with --worktree: one repository lookup and one base lookup for the whole start', async () => {
    const repo = makeRepo(join(tmp.root, '..', 'repo'));
    const head = gitSync(repo, 'rev-parse', 'HEAD');
    writeFileSync(log, '');
    const task = taskId('once');
    const result = await runTask({
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'work in a worktree',
      agent: 'claude',
      isolation: { worktree: true, repo },
      maxRestarts: 0,
      env: agentEnv({ FAKE_AGENT_DONE: '1' }),
    });
    expect(result.status).toBe('done');
    const rec = readWorktreeRecord(new RunsLayout(tmp.root).taskDir(PROJECT, task));
    expect([rec?.base_commit, rec?.base_branch, existsSync(rec!.path)]).toEqual([head, 'main', true]);
    const calls = readFileSync(log, 'utf8').split('\n');
    // repoRoot asks whether the repository is bare; resolveCommit verifies `<base>^{commit}`
    expect(calls.filter((c) => c.includes('--is-bare-repository'))).toHaveLength(1);
    expect(calls.filter((c) => c.includes('HEAD^{commit}'))).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith('symbolic-ref'))).toHaveLength(1);
  });
});
