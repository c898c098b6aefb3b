import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FORGE_DEFAULT_PROMPT, loadConfig } from '@app/storage';
import { decideGithubEvent } from '@app/triggers';

describe('forge.github config', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'forge-cfg-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const load = (text: string) => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, text);
    return () => loadConfig(path, { strict: false });
  };
  const head = 'forge:\n  github:\n    webhook_secret: 0123456789abcdef\n    bot: conductor-bot\n';
  const rule = '    rules:\n      issues:\n        repository: octo/app\n        label: agent\n        task:\n          project: app\n';

  it('reads the section with its defaults (prompt from the issue, 3 feedback rounds)', () => {
    const cfg = load(head + rule)();
    expect(cfg.forge?.github).toEqual({
      webhook_secret: '0123456789abcdef',
      bot: 'conductor-bot',
      max_feedback_rounds: 3,
      rules: { issues: { name: 'issues', repository: 'octo/app', label: 'agent', task: { project_id: 'app', prompt: FORGE_DEFAULT_PROMPT, agent_type: '' } } },
    });
  });

  it.each([
    ['a missing secret', 'forge:\n  github:\n    bot: b\n', /config\.yaml:\d+:\d+: forge\.github\.webhook_secret: is required/],
    ['a short secret', 'forge:\n  github:\n    webhook_secret: short\n    bot: b\n', /forge\.github\.webhook_secret: is required \(at least 16/],
    ['a bad bot login', head.replace('conductor-bot', '"not a login"'), /forge\.github\.bot: must be the bot's GitHub login/],
    ['an unknown key', `${head}    secret: x\n`, /forge\.github\.secret: unknown key/],
    ['a bad repository', head + rule.replace('octo/app', 'octo'), /forge\.github\.rules\.issues\.repository: must be owner\/name/],
    ['a rule without a label', head + rule.replace('        label: agent\n', ''), /forge\.github\.rules\.issues\.label: is required/],
    ['a rule without a project', head + rule.replace('          project: app\n', '          agent: x\n'), /forge\.github\.rules\.issues\.task\.project: is required/],
    ['negative rounds', `${head}    max_feedback_rounds: -1\n`, /forge\.github\.max_feedback_rounds: must be 0 or more/],
  ])('fails closed on %s', (_what, text, re) => {
    expect(load(text)).toThrow(re);
  });
});

describe('decideGithubEvent', () => {
  const cfg = { webhook_secret: 'x'.repeat(16), bot: 'conductor-bot', max_feedback_rounds: 1, rules: { r: { name: 'r', repository: 'octo/app', label: 'agent', task: { project_id: 'app', prompt: 'p', agent_type: '' } } } };
  const repository = { full_name: 'octo/app' };

  it('counts the failing checks of one commit as one round and a review by its id', () => {
    const run = (name: string) => ({ action: 'completed', check_run: { name, head_sha: 'abc', conclusion: 'failure', pull_requests: [{ number: 3 }] }, repository });
    const a = decideGithubEvent(cfg, 'check_run', run('lint'));
    const b = decideGithubEvent(cfg, 'check_run', run('test'));
    expect(a).toMatchObject({ kind: 'feedback', numbers: [3], round: 'sha:abc' });
    expect(b).toMatchObject({ kind: 'feedback', round: 'sha:abc' });
    expect(decideGithubEvent(cfg, 'pull_request_review', { action: 'submitted', review: { id: 9, state: 'changes_requested', body: 'no' }, pull_request: { number: 3 }, repository })).toMatchObject({ kind: 'feedback', round: 'review:9' });
    expect(decideGithubEvent(cfg, 'pull_request_review', { action: 'submitted', review: { id: 9, state: 'approved' }, pull_request: { number: 3 }, repository }).kind).toBe('ignore');
  });

  it("ignores the bot's own comments and mentions inside other words", () => {
    const comment = (body: string, login = 'ada') => decideGithubEvent(cfg, 'issue_comment', { action: 'created', issue: { number: 1 }, comment: { body, user: { login } }, repository });
    expect(comment('hey @conductor-bot, look').kind).toBe('comment');
    expect(comment('@conductor-bot again', 'conductor-bot').kind).toBe('ignore');
    expect(comment('mail me at x@conductor-bot.dev').kind).toBe('ignore');
  });
});
