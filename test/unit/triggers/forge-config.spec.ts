import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FORGE_DEFAULT_CATCH_UP_MS, FORGE_DEFAULT_PROMPT, GITHUB_DEFAULT_API_URL, loadConfig } from '@app/storage';
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
      api_url: GITHUB_DEFAULT_API_URL,
      catch_up_interval_ms: FORGE_DEFAULT_CATCH_UP_MS,
    });
  });

  const prRule = `${rule}          isolation: worktree\n          project_root: /src/app\n        pull_request:\n          base: main\n`;
  const strictLoad = (text: string, env: NodeJS.ProcessEnv = {}) => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, `agents:\n  x:\n    type: command\n    command: /bin/true\n${text}`);
    return () => loadConfig(path, { strict: true, env });
  };

  it('a rule that opens pull requests reads its token from token_file (relative to the config) or CONDUCTOR_GITHUB_TOKEN', () => {
    writeFileSync(join(dir, 'gh.token'), 'ghp_fromfile\n');
    const fromFile = strictLoad(`${head}    token_file: gh.token\n    api_url: http://127.0.0.1:9/\n    catch_up_interval: 30s\n${prRule}`)();
    expect(fromFile.forge?.github).toMatchObject({ token: 'ghp_fromfile', token_file: join(dir, 'gh.token'), api_url: 'http://127.0.0.1:9', catch_up_interval_ms: 30_000 });
    expect(fromFile.forge?.github?.rules.issues.pull_request).toEqual({ remote: 'origin', base: 'main' });
    const fromEnv = strictLoad(head + prRule, { CONDUCTOR_GITHUB_TOKEN: 'ghp_env' })();
    expect(fromEnv.forge?.github?.token).toBe('ghp_env');
  });

  it("the server reads the token even with its lenient load; other lenient loads (list, status) neither read nor need it", () => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, head + prRule);
    expect(() => loadConfig(path, { strict: false, serverSecrets: true, env: {} })).toThrow(/forge\.github\.token_file: is required/);
    expect(loadConfig(path, { strict: false, serverSecrets: true, env: { CONDUCTOR_GITHUB_TOKEN: 't' } }).forge?.github?.token).toBe('t');
    expect(loadConfig(path, { strict: false, env: {} }).forge?.github?.token).toBeUndefined();
  });

  it.each([
    ['a pull-request rule without a token', head + prRule, /forge\.github\.token_file: is required: rule "issues" opens pull requests \(or set CONDUCTOR_GITHUB_TOKEN\)/],
    ['an empty token file', `${head}    token_file: empty.token\n${prRule}`, /forge\.github\.token_file: read token_file of forge\.github: token file is empty/],
    ['a missing token file', `${head}    token_file: none.token\n${prRule}`, /forge\.github\.token_file: read token_file of forge\.github: ENOENT/],
  ])('fails closed on %s', (_what, text, re) => {
    writeFileSync(join(dir, 'empty.token'), '\n');
    expect(strictLoad(text)).toThrow(re);
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
    ['a plain-http API off this machine', `${head}    api_url: http://github.example\n`, /forge\.github\.api_url: must be an https:\/\/ URL/],
    ['an API URL with a token in it', `${head}    api_url: https://me:ghp@github.example\n`, /forge\.github\.api_url: must not hold credentials/],
    ['a too short catch-up interval', `${head}    catch_up_interval: 1s\n`, /forge\.github\.catch_up_interval: must be a duration between 10s and 24h/],
    ['pull requests without a worktree', `${head}${rule}        pull_request: {}\n`, /forge\.github\.rules\.issues\.pull_request: needs the task in its own worktree/],
    ['a remote that is an option', `${head}${rule}          isolation: worktree\n          project_root: /x\n        pull_request:\n          remote: --upload-pack=evil\n`, /pull_request\.remote: must be a git remote name or URL/],
    ['a base that is no branch name', `${head}${rule}          isolation: worktree\n          project_root: /x\n        pull_request:\n          base: "a..b"\n`, /pull_request\.base: must be a branch name/],
  ])('fails closed on %s', (_what, text, re) => {
    expect(load(text)).toThrow(re);
  });
});

describe('decideGithubEvent', () => {
  const cfg = { webhook_secret: 'x'.repeat(16), bot: 'conductor-bot', max_feedback_rounds: 1, api_url: GITHUB_DEFAULT_API_URL, catch_up_interval_ms: 60_000, rules: { r: { name: 'r', repository: 'octo/app', label: 'agent', task: { project_id: 'app', prompt: 'p', agent_type: '' } } } };
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
