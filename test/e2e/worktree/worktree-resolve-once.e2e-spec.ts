import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTask } from '@app/runner';
import { readWorktreeRecord } from '@app/worktree';
import { loadConfig, RunsLayout } from '@app/storage';
import { createApiApp, waitUntil } from '../../utils/api-app';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { agentEnv, PROJECT, taskId, tempRoot } from '../runner/helpers';
import { P, WorktreeSandbox } from './helpers';
import { loopParts } from '../../utils/loop-parts';

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
      ...loopParts,
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

  it('POST /api/v1/tasks with isolation worktree: the door resolves once and the loop does not resolve again', async () => {
    const sb = new WorktreeSandbox();
    const api = await createApiApp({ root: sb.root, config: loadConfig(sb.config, { strict: false }) });
    try {
      const head = gitSync(sb.repo, 'rev-parse', 'HEAD');
      writeFileSync(log, '');
      const task = 'task-20260101-120000-resolveonce';
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { project_id: P, task_id: task, agent_type: 'writer', prompt: 'write', project_root: sb.repo, isolation: 'worktree', config: { WRITE_TEXT: 'x' } } });
      expect(res.statusCode).toBe(201);
      await waitUntil(async () => ((await api.app.inject({ method: 'GET', url: `/api/projects/${P}/tasks/${task}` })).json().status === 'all_finished' ? true : undefined));
      expect(readWorktreeRecord(sb.taskDir(task))?.base_commit).toBe(head);
      const calls = readFileSync(log, 'utf8').split('\n');
      expect(calls.filter((c) => c.includes('--is-bare-repository'))).toHaveLength(1);
      expect(calls.filter((c) => c.includes('HEAD^{commit}'))).toHaveLength(1);
    } finally {
      await api.close();
      sb.cleanup();
    }
  });
});
