/**
 * The GitHub forge adapter, inbound (docs/triggers.md), on a real server with the API key on:
 * deliveries signed exactly as GitHub signs them (`@octokit/webhooks-methods`), deny by default,
 * a labelled issue starts a task, redeliveries are deduplicated durably, a mention wakes the task,
 * CI failures and change requests on the orchestrator's pull request wake it up to the retry cap,
 * then needs_input with the needs_input webhook; closing the issue stops the task.
 * Needs `npm run build` (bin/conductor).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import { readMessages } from '@app/messagebus';
import { RunsLayout } from '@app/storage';
import { githubStateDir, readLink, sha256Hex, writeLink } from '@app/triggers';
import { gitSync, makeRepo } from '../../utils/git-repo';
import { webhookReceiver, WebhookReceiver } from '../../utils/webhook-receiver';
import { deliverGithub, FORGE_REPO, FORGE_SECRET, forgeConfig, forgeRepository } from './forge-helpers';
import { getJson, RunningServer, startConductor, waitFor, writeConfig, writeFakeAgent } from '../server/helpers';

const API_KEY = 'server-key-for-the-rest-of-the-api';
const SECRET = FORGE_SECRET;
const REPO = FORGE_REPO;
const repository = forgeRepository;

describe('GitHub forge adapter (inbound)', () => {
  let dir: string;
  let root: string;
  let server: RunningServer;
  let hooks: WebhookReceiver;
  let repo: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'forge-e2e-'));
    root = join(dir, 'runs');
    repo = makeRepo(join(dir, 'app'));
    hooks = await webhookReceiver();
    const extra = forgeConfig(hooks.url, [
      'rules:',
      '  agent-issues:',
      `    repository: ${REPO}`,
      '    label: agent',
      '    task:',
      '      project: gh',
      '  isolated:',
      `    repository: ${REPO}`,
      '    label: agent-worktree',
      '    task:',
      '      project: gh',
      '      isolation: worktree',
      `      project_root: ${repo}`,
      '      prompt: "Isolated: {{payload.title}}"',
    ]);
    server = await startConductor(dir, root, writeConfig(dir, writeFakeAgent(dir), extra), { CONDUCTOR_API_KEY: API_KEY, CONDUCTOR_NO_AUTH: '' });
  });
  afterAll(async () => {
    await server?.stop();
    await hooks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = (event: string, payload: unknown, opts: { delivery?: string; secret?: string; signature?: string } = {}) => deliverGithub(server.url, event, payload, opts);
  const labelled = (number: number, label = 'agent') => ({
    action: 'labeled',
    label: { name: label },
    issue: { number, title: `Fix the flaky login #${number}`, body: 'Steps: open /login twice.', html_url: `https://github.com/${REPO}/issues/${number}`, user: { login: 'ada' }, labels: [{ name: label }] },
    repository,
  });
  const tasksOf = () => (existsSync(join(root, 'gh')) ? readdirSync(join(root, 'gh')).filter((t) => t.startsWith('task-')) : []);
  const bus = (task: string) => readMessages(new RunsLayout(root).taskBus('gh', task));
  const detail = async (task: string) => (await getJson(`${server.url}/api/projects/gh/tasks/${task}`, { headers: { Authorization: `Bearer ${API_KEY}` } })).body;

  it('refuses a missing or wrong signature with 401 and acts on nothing; the API key is not accepted instead', async () => {
    expect((await deliver('issues', labelled(1), { signature: '' })).status).toBe(401);
    expect((await deliver('issues', labelled(1), { secret: 'another-secret-of-16+' })).status).toBe(401);
    expect((await deliver('issues', labelled(1), { signature: 'sha256=zz' })).status).toBe(401);
    const withKey = await getJson(`${server.url}/api/v1/forge/github`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${API_KEY}`, 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': 'd-1' }, body: JSON.stringify(labelled(1)) });
    expect(withKey.status).toBe(401);
    expect(tasksOf()).toEqual([]);
  });

  it('answers unknown events, other labels and other repositories 202 ignored', async () => {
    const star = await deliver('star', { action: 'created', repository });
    expect(star.status).toBe(202);
    expect(star.body).toMatchObject({ event: 'star', outcome: 'ignored' });
    expect((await deliver('issues', labelled(2, 'bug'))).body.outcome).toBe('ignored');
    expect((await deliver('issues', { ...labelled(2), repository: { full_name: 'someone/else' } })).status).toBe(202);
    expect((await deliver('ping', { zen: 'Keep it logically awesome.', repository })).status).toBe(202);
    expect(tasksOf()).toEqual([]);
  });

  let task: string;

  it('an issue labelled `agent` starts one task with its title and body; a redelivery starts nothing', async () => {
    const delivery = randomUUID();
    const res = await deliver('issues', labelled(7), { delivery });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'started', project_id: 'gh' });
    task = res.body.task_id;
    const prompt = readFileSync(join(root, 'gh', task, 'TASK.md'), 'utf8');
    expect(prompt).toContain(`GitHub issue ${REPO}#7: Fix the flaky login #7`);
    expect(prompt).toContain('Steps: open /login twice.');
    const again = await deliver('issues', labelled(7), { delivery });
    expect(again.status).toBe(202);
    expect(again.body.outcome).toBe('duplicate');
    // the same label again (a new delivery) finds the durable link: no second task
    expect((await deliver('issues', labelled(7))).body).toMatchObject({ outcome: 'ignored', task_id: task });
    expect(tasksOf()).toEqual([task]);
    expect(readLink(root, REPO, 7)).toMatchObject({ kind: 'issue', task_id: task, state: 'started' });
    await waitFor('the first run to finish', async () => (await detail(task)).done === true);
  });

  it('a comment mentioning the bot is posted to the task and wakes it; one without the mention is ignored', async () => {
    const comment = (body: string) => ({ action: 'created', issue: { number: 7 }, comment: { body, user: { login: 'ada' } }, repository });
    expect((await deliver('issue_comment', comment('looks fine'))).body.outcome).toBe('ignored');
    const res = await deliver('issue_comment', comment('@conductor-bot please also cover logout'));
    expect(res.body).toMatchObject({ outcome: 'woken', task_id: task });
    expect(bus(task).find((m) => m.type === 'USER')?.body).toContain('please also cover logout');
    await waitFor('a second run, started by the wake, to finish', async () => {
      const d = await detail(task);
      return d.done === true && d.runs.length === 2;
    });
  });

  it('failed checks wake the task with their names and output tail up to the cap, then needs_input and the webhook', async () => {
    // the pull request the outbound side opened for the task (its link, as the merge queue writes it)
    const now = new Date().toISOString();
    writeLink(root, { repository: REPO, number: 8, kind: 'pull', project_id: 'gh', task_id: task, rule: 'agent-issues', feedback_rounds: 0, state: 'started', created_at: now, updated_at: now });
    const failed = (sha: string) => ({
      action: 'completed',
      check_run: { name: 'unit-tests', head_sha: sha, status: 'completed', conclusion: 'failure', html_url: 'https://github.com/x', output: { title: '2 tests failed', summary: 'login.spec.ts', text: `${'noise\n'.repeat(2000)}Expected 200, got 500` }, pull_requests: [{ number: 8 }] },
      repository,
    });
    expect((await deliver('check_run', { ...failed('aaa'), check_run: { ...failed('aaa').check_run, conclusion: 'success' } })).body.outcome).toBe('ignored');
    const first = await deliver('check_run', failed('aaa'));
    expect(first.body).toMatchObject({ outcome: 'woken', task_id: task });
    const feedback = bus(task).find((m) => m.type === 'FEEDBACK')!;
    expect(feedback.body).toContain('CI check failed: unit-tests');
    expect(feedback.body).toContain('Expected 200, got 500');
    expect(feedback.body.length).toBeLessThan(5000);
    await waitFor('the woken run to finish', async () => (await detail(task)).done === true);
    const second = await deliver('check_run', failed('bbb'));
    expect(second.body).toMatchObject({ outcome: 'needs_input', task_id: task });
    const parked = await waitFor('the task in needs_input', async () => {
      const d = await detail(task);
      return d.status === 'needs_input' && d;
    });
    expect(parked.open_questions[0].body).toContain('over the retry cap of 1');
    const sent = await waitFor('the needs_input webhook', () => hooks.received.find((r) => JSON.parse(r.body).event === 'needs_input'));
    expect(JSON.parse(sent.body)).toMatchObject({ task_id: task, project_id: 'gh' });
    // further feedback does not wake a task that waits for a person
    expect((await deliver('pull_request_review', { action: 'submitted', review: { id: 1, state: 'changes_requested', body: 'rename it', user: { login: 'bob' } }, pull_request: { number: 8 }, repository })).body.outcome).toBe('ignored');
  });

  it('a rule with isolation worktree starts the task in its own worktree of the project', async () => {
    const res = await deliver('issues', labelled(21, 'agent-worktree'));
    expect(res.body.outcome).toBe('started');
    const t = res.body.task_id;
    expect(readFileSync(join(root, 'gh', t, 'TASK.md'), 'utf8')).toContain('Isolated: Fix the flaky login #21');
    const worktree = await waitFor('the task worktree', () => existsSync(join(root, 'gh', t, 'WORKTREE.yaml')) && readFileSync(join(root, 'gh', t, 'WORKTREE.yaml'), 'utf8'), 15_000);
    expect(worktree).toContain(`conductor/${t}`);
    expect(gitSync(repo, 'branch', '--list', `conductor/${t}`)).toContain(`conductor/${t}`);
    await waitFor('the isolated task to finish', async () => (await detail(t)).done === true);
  });

  it("a damaged link record is that issue's problem: its delivery fails (and may be redelivered), others go on", async () => {
    const linkFile = join(githubStateDir(root), 'links', `${sha256Hex(`${REPO.toLowerCase()}#30`)}.json`);
    writeFileSync(linkFile, '{"repository": tru');
    const delivery = randomUUID();
    const comment = { action: 'created', issue: { number: 30 }, comment: { body: '@conductor-bot hi', user: { login: 'ada' } }, repository };
    expect((await deliver('issue_comment', comment, { delivery })).status).toBe(500);
    // the failed delivery was not recorded: GitHub's redelivery is acted on again (and fails again here)
    expect((await deliver('issue_comment', comment, { delivery })).status).toBe(500);
    expect((await deliver('issue_comment', { ...comment, issue: { number: 7 } })).body).toMatchObject({ outcome: 'woken', task_id: task });
  });

  it('closing the issue stops its task', async () => {
    const res = await deliver('issues', { action: 'closed', issue: { number: 7 }, repository });
    expect(res.body).toMatchObject({ outcome: 'stopped', task_id: task });
    expect(readLink(root, REPO, 7)?.state).toBe('stopped');
    await waitFor('the task to be done', async () => (await detail(task)).done === true);
    // a mention on the closed issue no longer wakes the stopped task
    const after = await deliver('issue_comment', { action: 'created', issue: { number: 7 }, comment: { body: '@conductor-bot still there?', user: { login: 'ada' } }, repository });
    expect(after.body).toMatchObject({ outcome: 'ignored', task_id: task });
    expect((await detail(task)).done).toBe(true);
  });
});

describe('GitHub forge adapter not configured', () => {
  it('answers 404: the route is closed without a secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forge-off-'));
    const server = await startConductor(dir, join(dir, 'runs'), writeConfig(dir, writeFakeAgent(dir)));
    try {
      const body = JSON.stringify({ zen: 'x' });
      const res = await getJson(`${server.url}/api/v1/forge/github`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'ping', 'X-GitHub-Delivery': 'x', 'X-Hub-Signature-256': await sign(SECRET, body) }, body });
      expect(res.status).toBe(404);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
