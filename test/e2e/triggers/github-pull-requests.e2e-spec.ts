/**
 * The GitHub forge adapter, outbound (docs/triggers.md, "Pull requests"), on the real built server:
 * an issue labelled `agent` starts a task in its own worktree; after its first attempt the task's
 * branch is pushed to a real bare repository and a draft pull request opened; the attempt that
 * completes the task marks it ready; a failed check on it wakes the task, whose new commit is pushed
 * and described; after the retry cap the task waits for a person; a restart catches up with GitHub
 * by conditional GETs, and an issue closed while the server was down stops the task.
 * GitHub is test/utils/github-double.ts: GitHub's published OpenAPI description and GraphQL schema.
 * Needs `npm run build` (bin/conductor).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { RunsLayout } from '@app/storage';
import { readLink } from '@app/triggers';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { GithubDouble, githubDouble } from '../../utils/github-double';
import { webhookReceiver, WebhookReceiver } from '../../utils/webhook-receiver';
import { deliverGithub, FORGE_REPO, forgeConfig, forgeRepository } from './forge-helpers';
import { CONDUCTOR, getJson, runCli, RunningServer, serverEnv, startConductor, waitFor, writeConfig } from '../server/helpers';

const REPO = FORGE_REPO;
const repository = forgeRepository;

/** Commits one file per attempt in its worktree; from the second attempt on it waits for GO-<n> in the task folder, then writes DONE. */
function writeCommittingAgent(dir: string): string {
  const path = join(dir, 'committing-agent.sh');
  const script = [
    '#!/bin/sh',
    'cat > /dev/null',
    'n=$(cat "$JRUN_TASK_FOLDER/attempts" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$JRUN_TASK_FOLDER/attempts"',
    'echo "change $n" > "work-$n.txt"',
    'git add -A && git -c user.email=agent@example.com -c user.name=agent -c commit.gpgsign=false commit -q -m "agent work $n"',
    // waits for GO-<n>; a task folder removed under it (a failed test's clean-up) ends it
    'if [ "$n" -ge 2 ]; then while [ ! -f "$JRUN_TASK_FOLDER/GO-$n" ]; do [ -d "$JRUN_TASK_FOLDER" ] || exit 1; sleep 0.05; done; touch "$JRUN_TASK_FOLDER/DONE"; fi',
    'exit 0',
    '',
  ];
  writeFileSync(path, script.join('\n'), { mode: 0o755 });
  return path;
}

describe('GitHub forge adapter (pull requests out)', () => {
  let dir: string;
  let root: string;
  let repo: string;
  let remote: string;
  let config: string;
  let gh: GithubDouble;
  let server: RunningServer;
  let hooks: WebhookReceiver;
  const start = () => startConductor(dir, root, config, { CONDUCTOR_GITHUB_TOKEN: 'ghp_e2e-token' });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'forge-pr-e2e-'));
    root = join(dir, 'runs');
    remote = join(dir, 'remote.git');
    gitSync(dir, 'init', '-q', '--bare', '-b', 'main', remote);
    repo = makeRepo(join(dir, 'app'));
    gitSync(repo, 'remote', 'add', 'origin', remote);
    gitSync(repo, 'push', '-q', 'origin', 'main');
    gh = await githubDouble();
    hooks = await webhookReceiver();
    const extra = forgeConfig(hooks.url, [
      `api_url: ${gh.url}`,
      'rules:',
      '  agent-issues:',
      `    repository: ${REPO}`,
      '    label: agent',
      '    task:',
      '      project: gh',
      '      isolation: worktree',
      `      project_root: ${repo}`,
      '    pull_request:',
      '      remote: origin',
      '      base: main',
    ]);
    config = writeConfig(dir, writeCommittingAgent(dir), extra);
    server = await start();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await gh?.close();
    await hooks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = (event: string, payload: unknown) => deliverGithub(server.url, event, payload);
  const bus = (task: string) => readMessages(new RunsLayout(root).taskBus('gh', task));
  const detail = async (task: string) => (await getJson(`${server.url}/api/projects/gh/tasks/${task}`)).body;
  const remoteHead = (branch: string) => gitSync(remote, 'rev-parse', '--verify', '-q', `refs/heads/${branch}`).trim();
  const go = (task: string, n: number) => writeFileSync(join(root, 'gh', task, `GO-${n}`), '');
  const failedCheck = (sha: string, number: number) => ({
    action: 'completed',
    check_run: { name: 'unit-tests', head_sha: sha, status: 'completed', conclusion: 'failure', html_url: 'https://github.com/x', output: { title: '1 test failed', summary: 'login.spec.ts', text: 'Expected 200, got 500' }, pull_requests: [{ number }] },
    repository,
  });

  let task: string;
  let number: number;

  it('an issue labelled `agent` becomes a task whose first attempt is pushed and opened as a draft pull request', async () => {
    const res = await deliver('issues', {
      action: 'labeled',
      label: { name: 'agent' },
      issue: { number: 7, title: 'Fix the flaky login', body: 'Steps: open /login twice.', html_url: `https://github.com/${REPO}/issues/7`, user: { login: 'ada' }, labels: [{ name: 'agent' }] },
      repository,
    });
    expect(res.body).toMatchObject({ outcome: 'started', project_id: 'gh' });
    task = res.body.task_id;
    const branch = `conductor/${task}`;
    const pull = await waitFor('the draft pull request', () => [...gh.pulls.values()].find((p) => p.head === branch), 30_000);
    number = pull.number as number;
    expect(pull).toMatchObject({ title: 'Fix the flaky login', base: 'main', draft: true, state: 'open' });
    expect(pull.body).toContain('Closes #7.');
    expect(pull.body).toContain('- agent work 1');
    // the branch on the remote is the task's first attempt, pushed by the real git (the second
    // attempt may have committed locally since: it commits before it waits for GO-2)
    expect(gitSync(remote, 'log', '-1', '--format=%s', remoteHead(branch)).trim()).toBe('agent work 1');
    // recorded once GitHub's answer is in: the pull link that routes feedback, and the issue's pull request
    await waitFor('the pull request recorded', () => readLink(root, REPO, 7)?.pull?.state === 'open');
    expect(readLink(root, REPO, number)).toMatchObject({ kind: 'pull', task_id: task, branch, state: 'started' });
    expect(readLink(root, REPO, 7)?.pull).toMatchObject({ state: 'open', number, draft: true });
    await waitFor('the note on the task bus', () => bus(task).some((m) => m.type === 'INFO' && m.body.startsWith(`opened draft pull request #${number}: https://github.com/`)));
  });

  it('the attempt that completes the task marks the pull request ready for review', async () => {
    go(task, 2);
    await waitFor('the pull request marked ready', () => gh.pulls.get(number)?.draft === false, 30_000);
    expect(gh.requests.some((r) => r.path === '/graphql' && JSON.stringify(r.body).includes('markPullRequestReadyForReview'))).toBe(true);
    await waitFor('the ready note', () => bus(task).some((m) => m.body.startsWith(`pull request #${number} marked ready for review`)));
    expect((await detail(task)).done).toBe(true);
    expect(gh.pulls.get(number)?.body).toContain('- agent work 2');
  });

  it('a failed check wakes the task; its new commit is pushed and the description updated; past the cap it waits for a person', async () => {
    const woken = await deliver('check_run', failedCheck('aaa', number));
    expect(woken.body).toMatchObject({ outcome: 'woken', task_id: task });
    expect(bus(task).find((m) => m.type === 'FEEDBACK')?.body).toContain('Expected 200, got 500');
    go(task, 3);
    await waitFor('the third commit in the description', () => String(gh.pulls.get(number)?.body).includes('- agent work 3'), 30_000);
    expect(gh.requests.some((r) => r.method === 'PATCH' && r.path === `/repos/${REPO}/pulls/${number}`)).toBe(true);
    const branch = `conductor/${task}`;
    await waitFor('the remote branch at the new commit', () => remoteHead(branch) === gitSync(repo, 'rev-parse', `refs/heads/${branch}`).trim());
    expect(gh.pulls.size).toBe(1); // updated, never opened twice
    await waitFor('the woken task done again', async () => (await detail(task)).done === true);
    expect((await deliver('check_run', failedCheck('bbb', number))).body).toMatchObject({ outcome: 'needs_input', task_id: task });
    await waitFor('the task in needs_input', async () => (await detail(task)).status === 'needs_input');
    const sent = await waitFor('the needs_input webhook', () => hooks.received.find((r) => JSON.parse(r.body).event === 'needs_input'));
    expect(JSON.parse(sent.body)).toMatchObject({ project_id: 'gh', task_id: task });
    expect(JSON.parse(sent.body).question).toContain('over the retry cap of 1');
    expect(gh.problems).toEqual([]);
  });

  it("the merge's pull-request mode opens a draft for a task no issue started, then marks it ready when it is done", async () => {
    const manual = 'task-20261128-120000-manual';
    const created = await getJson(`${server.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: 'gh', task_id: manual, agent_type: 'fake', prompt: 'Refactor the login form\n\nKeep the markup.', project_root: repo, isolation: 'worktree', base: 'main' }),
    });
    expect(created.status).toBe(201);
    expect((await getJson(`${server.url}/api/projects/gh/tasks/${manual}/pull-request`)).status).toBe(404);
    // the agent counts its attempt before it commits: wait for the commit itself
    const firstCommit = () => gitSync(repo, 'log', '-1', '--format=%s', `refs/heads/conductor/${manual}`, '--') === 'agent work 1';
    await waitFor('the first attempt to commit', () => existsSync(join(root, 'gh', manual, 'attempts')) && firstCommit());
    const ask = (body: unknown) => getJson(`${server.url}/api/projects/gh/tasks/${manual}/pull-request`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    // the remote is a local bare repository: its URL names no GitHub repository
    const unnamed = await ask({});
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.message).toMatch(/cannot tell the GitHub repository from the remote's URL .*: give "repository": "owner\/name"/);
    expect((await ask({ repository: REPO, remote: '--upload-pack=touch /tmp/x' })).body.error.message).toMatch(/^remote must be a git remote name or URL/);
    expect((await ask({ repository: '../etc' })).status).toBe(400);
    const opened = await ask({ repository: REPO, base: 'main' });
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ project_id: 'gh', task_id: manual, outcome: 'opened', ready: false });
    const pull = gh.pulls.get(opened.body.number)!;
    expect(pull).toMatchObject({ title: 'Refactor the login form', head: `conductor/${manual}`, base: 'main', draft: true });
    expect(pull.body).not.toContain('Closes #');
    expect(pull.body).toContain('opened on request');
    const shown = await getJson(`${server.url}/api/v1/tasks/${manual}/pull-request?project_id=gh`);
    expect(shown.body).toMatchObject({ repository: REPO, source: 'request', state: 'started', pull: { number: opened.body.number, draft: true, url: opened.body.url } });
    // the same from the command line (conductor's client subcommand)
    const cli = await runCli(CONDUCTOR, ['task', 'pull-request', manual, '--project', 'gh', '--server', server.url], serverEnv(dir));
    expect(cli.stdout).toBe(`Pull request #${opened.body.number} unchanged (draft): ${opened.body.url}\n`);
    const refused = await runCli(CONDUCTOR, ['task', 'pull-request', manual, '--project', 'gh', '--base', '-x', '--server', server.url], serverEnv(dir));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('base must be a branch name');
    go(manual, 2);
    await waitFor('the requested pull request marked ready', () => gh.pulls.get(opened.body.number)?.draft === false, 30_000);
    expect(readLink(root, REPO, opened.body.number)).toMatchObject({ kind: 'pull', task_id: manual, rule: 'request' });
    expect(gh.problems).toEqual([]);
  });

  it('a restart catches up with conditional GETs; an issue closed while the server was down stops its task', async () => {
    await server.stop();
    server = await start();
    const issuePath = `/repos/${REPO}/issues/7`;
    const seen = () => gh.requests.filter((r) => r.path === issuePath);
    await waitFor('the catch-up to ask for the issue', () => seen().length >= 1);
    await server.stop();
    server = await start();
    const conditional = await waitFor('a conditional GET answered 304', () => seen().find((r) => r.ifNoneMatch && r.status === 304));
    expect(conditional.ifNoneMatch).toMatch(/^"/);
    await waitFor('the pull request asked for conditionally too', () => gh.requests.some((r) => r.path === `/repos/${REPO}/pulls/${number}` && r.status === 304));
    expect(readLink(root, REPO, 7)?.state).toBe('started');
    await server.stop();
    gh.issueStates.set(7, 'closed');
    server = await start();
    await waitFor('the link of the closed issue stopped', () => readLink(root, REPO, 7)?.state === 'stopped');
    await waitFor('the link of its pull request stopped', () => readLink(root, REPO, number)?.state === 'stopped');
    await waitFor('the task stopped', async () => (await detail(task)).done === true);
    expect(existsSync(join(root, 'gh', task))).toBe(true);
    expect(readFileSync(join(root, 'gh', task, 'TASK.md'), 'utf8')).toContain('Fix the flaky login');
    expect(gh.problems).toEqual([]);
  });
});
