import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GITHUB_DEFAULT_API_URL, type GithubForgeConfig } from '@app/storage';
import { changeLink, type ForgeBranches, type ForgeTasks, githubRepositoryOf, GithubPullRequests, GithubRestClient, readLink, writeLink } from '@app/triggers';
import { GithubDouble, githubDouble } from '../../utils/github-double';

/**
 * The pull-request side's recovery rules, with GitHub from test/utils/github-double.ts and the
 * app's ports as small in-memory parts (the e2e spec drives the real ones through bin/conductor).
 */
describe('GithubPullRequests', () => {
  let gh: GithubDouble;
  let root: string;
  const notes: string[] = [];
  let pushes = 0;
  let pushFails: string | undefined;
  let done = false;
  const tasks: ForgeTasks = {
    start: () => Promise.reject(new Error('not here')),
    wake: () => Promise.resolve(),
    needsInput: () => Promise.resolve(),
    stop: () => Promise.resolve(),
    note: (_p, _t, body) => Promise.resolve(void notes.push(body)),
    isDone: () => done,
    title: () => 'Fix login',
    recentProgress: () => [{ type: 'FACT', body: 'login fixed\nand tested' }],
  };
  const branches: ForgeBranches = {
    remoteUrl: () => Promise.resolve('git@github.com:octo/app.git'),
    readyBranch: () => Promise.resolve({ repo: '/nowhere', branch: 'conductor/task-1', base_branch: 'main', commits: ['fix login'] }),
    push: () => {
      pushes++;
      return pushFails ? Promise.reject(new Error(pushFails)) : Promise.resolve({ commit: 'abc123def4567890', updated: true });
    },
  };
  const cfg: GithubForgeConfig = {
    webhook_secret: 'x'.repeat(16),
    bot: 'bot',
    max_feedback_rounds: 3,
    api_url: GITHUB_DEFAULT_API_URL,
    catch_up_interval_ms: 60_000,
    rules: { r: { name: 'r', repository: 'octo/app', label: 'agent', task: { project_id: 'p', prompt: 'x', agent_type: '', isolation: 'worktree', project_root: '/nowhere' }, pull_request: { remote: 'origin', base: '' } } },
  };
  let prs: GithubPullRequests;
  const now = new Date().toISOString();

  beforeAll(async () => {
    gh = await githubDouble();
  }, 60_000);
  afterAll(() => gh?.close());
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'forge-pr-unit-'));
    gh.pulls.clear();
    gh.requests.length = 0;
    notes.length = 0;
    pushes = 0;
    pushFails = undefined;
    done = false;
    prs = new GithubPullRequests({ root, schedules: {}, triggers: {}, forge: { github: cfg }, runSchedules: false }, tasks, branches, new GithubRestClient(gh.url, 't'));
    writeLink(root, { repository: 'octo/app', number: 7, kind: 'issue', project_id: 'p', task_id: 'task-1', rule: 'r', feedback_rounds: 0, state: 'started', title: 'Fix login', created_at: now, updated_at: now });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a create interrupted by a crash (link left `opening`) finds the pull request by its branch instead of opening a second', async () => {
    const first = await prs.taskChanged('p', 'task-1');
    expect(first).toMatchObject({ outcome: 'opened', ready: false });
    // as if the server died after GitHub created it and before the answer was recorded
    changeLink(root, 'octo/app', 7, (l) => ({ ...l, pull: { state: 'opening', branch: 'conductor/task-1' } }));
    const again = await prs.taskChanged('p', 'task-1');
    expect(again).toMatchObject({ outcome: 'opened', number: first.number });
    expect(gh.pulls.size).toBe(1);
    expect(gh.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pulls'))).toHaveLength(1);
    expect(gh.requests.some((r) => r.method === 'GET' && r.path.includes('head=octo%3Aconductor%2Ftask-1'))).toBe(true);
    expect(readLink(root, 'octo/app', first.number!)).toMatchObject({ kind: 'pull', task_id: 'task-1' });
    expect(gh.problems).toEqual([]);
  });

  it('a task already done when its first commits are seen gets a pull request opened ready, with no mutation; an unchanged one is left alone', async () => {
    done = true;
    const opened = await prs.taskChanged('p', 'task-1');
    expect(opened).toMatchObject({ outcome: 'opened', ready: true });
    expect(gh.pulls.get(opened.number!)).toMatchObject({ draft: false, base: 'main' });
    expect(String(gh.pulls.get(opened.number!)?.body)).toContain('- **FACT** login fixed and tested');
    expect(await prs.taskChanged('p', 'task-1')).toMatchObject({ outcome: 'updated' }); // pushed again (the double's push always says updated)
    expect(gh.requests.some((r) => r.path === '/graphql')).toBe(false);
    expect(gh.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);
  });

  it('a pull request closed on GitHub (its webhook stopped the task) is neither pushed to nor edited again', async () => {
    const opened = await prs.taskChanged('p', 'task-1');
    changeLink(root, 'octo/app', opened.number!, (l) => ({ ...l, state: 'stopped' }));
    const before = gh.requests.length;
    expect(await prs.taskChanged('p', 'task-1')).toMatchObject({ outcome: 'stopped', number: opened.number });
    expect(gh.requests.length).toBe(before);
    expect(pushes).toBe(1);
  });

  it('asked for a pull request without a token, it says what to configure; a remote URL is read for its GitHub repository', async () => {
    const off = new GithubPullRequests({ root, schedules: {}, triggers: {}, forge: { github: cfg }, runSchedules: false }, tasks, branches, undefined);
    await expect(off.openForTask('p', 'task-9', {})).rejects.toThrow('no GitHub token is configured: set forge.github.token_file or CONDUCTOR_GITHUB_TOKEN (docs/triggers.md)');
    expect(githubRepositoryOf('git@github.com:octo/app.git', GITHUB_DEFAULT_API_URL)).toBe('octo/app');
    expect(githubRepositoryOf('https://github.com/octo/app', GITHUB_DEFAULT_API_URL)).toBe('octo/app');
    expect(githubRepositoryOf('ssh://git@ghe.example:2222/team/svc.git', 'https://ghe.example/api/v3')).toBe('team/svc');
    expect(() => githubRepositoryOf('https://gitlab.com/octo/app.git', GITHUB_DEFAULT_API_URL)).toThrow(/cannot tell the GitHub repository/);
    const opened = await prs.openForTask('p', 'task-9', {});
    expect(opened).toMatchObject({ outcome: 'opened' });
    expect(gh.requests.find((r) => r.method === 'POST')?.path).toBe('/repos/octo/app/pulls');
  });

  it('a failed push is said on the task bus and opens nothing; tasks of other rules and projects are not touched', async () => {
    pushFails = "git push to origin failed: the remote branch conductor/task-1 has commits the task's branch lacks (not overwritten)";
    expect(await prs.taskChanged('p', 'task-1')).toMatchObject({ outcome: 'failed' });
    expect(notes).toEqual([`pull request not updated: ${pushFails}`]);
    expect(gh.pulls.size).toBe(0);
    expect(await prs.taskChanged('p', 'task-2')).toEqual({ outcome: 'not_forge' });
    expect(pushes).toBe(1);
  });
});
