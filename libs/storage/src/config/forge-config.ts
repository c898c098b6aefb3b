import { checkGitRemote, isSafeGitRef } from '../git-args';
import { buildTemplate, TaskTemplate, validateTriggerName } from './triggers-config';
import type { RawReader } from './raw-config';

/** How a rule's task reaches GitHub as a pull request (docs/triggers.md, "Pull requests"). */
export interface GithubPullRequestRule {
  /** The git remote (a remote name of the project's repository, or a URL) the task's branch is pushed to. */
  remote: string;
  /** The pull request's base branch; '' = the branch the task's worktree was started from. */
  base: string;
}

/** A rule of the GitHub forge adapter (docs/triggers.md): which labelled issues start which task. */
export interface GithubRule {
  name: string;
  /** `owner/name` of the repository whose events the rule takes. */
  repository: string;
  /** An issue given this label starts a task. */
  label: string;
  /** The task; its prompt is a template over the issue (`{{payload.title}}`, `{{payload.body}}`, ...). */
  task: TaskTemplate;
  /** Set: the task's branch is pushed and a pull request opened for it (needs `isolation: worktree`). */
  pull_request?: GithubPullRequestRule;
}

export interface GithubForgeConfig {
  /** The secret GitHub signs deliveries with (`X-Hub-Signature-256`); required. */
  webhook_secret: string;
  /** The bot's GitHub login: a comment mentioning `@<bot>` is routed to the task. */
  bot: string;
  /** CI failures and change requests routed to a task before it goes to needs_input (default 3). */
  max_feedback_rounds: number;
  rules: Record<string, GithubRule>;
  /** The REST API's base URL (GitHub Enterprise Server: `https://<host>/api/v3`). */
  api_url: string;
  /** The token pull requests are opened with (from `token_file` or CONDUCTOR_GITHUB_TOKEN); never logged. */
  token?: string;
  /** The file `token` was read from (resolved against the config file's folder). */
  token_file?: string;
  /** How often the server catches up with GitHub's state of the issues and pull requests it tracks (ms). */
  catch_up_interval_ms: number;
}

export interface ForgeConfig {
  github?: GithubForgeConfig;
}

export const FORGE_DEFAULT_MAX_FEEDBACK_ROUNDS = 3;
export const GITHUB_DEFAULT_API_URL = 'https://api.github.com';
export const FORGE_DEFAULT_CATCH_UP_MS = 5 * 60_000;
/** The environment variable that holds the GitHub token (it replaces `token_file`). */
export const GITHUB_TOKEN_ENV = 'CONDUCTOR_GITHUB_TOKEN';
/** The prompt of an issue's task when the rule gives none. */
export const FORGE_DEFAULT_PROMPT = 'GitHub issue {{payload.repository}}#{{payload.number}}: {{payload.title}}\n\n{{payload.body}}\n\n({{payload.url}})';

const REPOSITORY = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(\[bot\])?$/;

/**
 * The one check of a GitHub repository name and a pull request's base branch (the git remote's is
 * checkGitRemote), wherever they come from (config, API): each returns the value or throws one line.
 */
export function checkGithubRepository(value: string): string {
  if (!REPOSITORY.test(value) || value.includes('..')) throw new Error(`must be owner/name, got ${JSON.stringify(value).slice(0, 120)}`);
  return value;
}

/** A pull request's base branch: the git ref rule (git-args.ts), in a branch name's characters. */
export function checkGithubBranch(value: string): string {
  if (!isSafeGitRef(value) || !/^[A-Za-z0-9._/-]+$/.test(value)) throw new Error(`must be a branch name, got ${JSON.stringify(value).slice(0, 120)}`);
  return value;
}

function checked(r: RawReader, path: string[], check: (v: string) => string, value: string): string {
  try {
    return check(value);
  } catch (err) {
    return r.fail(path, (err as Error).message);
  }
}

function only(r: RawReader, path: string[], keys: string[]): void {
  const extra = Object.keys(r.map(path)).find((k) => !keys.includes(k));
  if (extra !== undefined) r.fail([...path, extra], `unknown key (expected one of ${keys.join(', ')})`);
}

/** The `forge:` section: fails closed (a missing secret, a bad repository or label is a config error). */
export function buildForge(r: RawReader): ForgeConfig | undefined {
  const v = r.get(['forge']);
  if (v === undefined || v === null) return undefined;
  only(r, ['forge'], ['github']);
  if (r.get(['forge', 'github']) === undefined || r.get(['forge', 'github']) === null) return {};
  const p = ['forge', 'github'];
  only(r, p, ['webhook_secret', 'bot', 'max_feedback_rounds', 'rules', 'api_url', 'token_file', 'catch_up_interval']);
  const secret = r.str([...p, 'webhook_secret']);
  if (secret.trim().length < 16) r.fail([...p, 'webhook_secret'], 'is required (at least 16 characters; the secret set on the GitHub webhook)');
  const bot = r.str([...p, 'bot']).trim();
  if (!LOGIN.test(bot)) r.fail([...p, 'bot'], `must be the bot's GitHub login, got ${JSON.stringify(bot)}`);
  let rounds = FORGE_DEFAULT_MAX_FEEDBACK_ROUNDS;
  if (r.get([...p, 'max_feedback_rounds']) !== undefined && r.get([...p, 'max_feedback_rounds']) !== null) {
    rounds = r.int([...p, 'max_feedback_rounds']);
    if (rounds < 0) r.fail([...p, 'max_feedback_rounds'], `must be 0 or more, got ${rounds}`);
  }
  const rules: Record<string, GithubRule> = {};
  for (const name of Object.keys(r.map([...p, 'rules'])).sort()) {
    const rp = [...p, 'rules', name];
    try {
      validateTriggerName(name);
    } catch (err) {
      r.fail(rp, (err as Error).message);
    }
    r.map(rp);
    only(r, rp, ['repository', 'label', 'task', 'pull_request']);
    const repository = checked(r, [...rp, 'repository'], checkGithubRepository, r.str([...rp, 'repository']).trim());
    const label = r.str([...rp, 'label']).trim();
    if (label === '' || label.length > 100) r.fail([...rp, 'label'], 'is required (the issue label that starts a task)');
    const task = buildTemplate(r, rp, FORGE_DEFAULT_PROMPT);
    rules[name] = { name, repository, label, task, ...pullRequestRule(r, rp, task) };
  }
  const tokenFile = r.str([...p, 'token_file']).trim();
  return {
    github: {
      webhook_secret: secret,
      bot,
      max_feedback_rounds: rounds,
      rules,
      api_url: apiUrl(r, [...p, 'api_url']),
      ...(tokenFile ? { token_file: tokenFile } : {}),
      catch_up_interval_ms: catchUpInterval(r, [...p, 'catch_up_interval']),
    },
  };
}

/** A rule's `pull_request:`; it needs the task in its own worktree of a known repository. */
function pullRequestRule(r: RawReader, rp: string[], task: TaskTemplate): { pull_request?: GithubPullRequestRule } {
  const pp = [...rp, 'pull_request'];
  if (r.get(pp) === undefined || r.get(pp) === null) return {};
  r.map(pp);
  only(r, pp, ['remote', 'base']);
  if (task.isolation !== 'worktree') r.fail(pp, 'needs the task in its own worktree: set task.isolation: worktree');
  if (!task.project_root) r.fail(pp, "needs task.project_root (the repository whose branch is pushed)");
  const remote = checked(r, [...pp, 'remote'], checkGitRemote, r.str([...pp, 'remote']).trim() || 'origin');
  const base = r.str([...pp, 'base']).trim();
  if (base !== '') checked(r, [...pp, 'base'], checkGithubBranch, base);
  return { pull_request: { remote, base } };
}

/** https only; plain http only to this machine (a test double or a local proxy). */
function apiUrl(r: RawReader, path: string[]): string {
  const text = r.str(path).trim();
  if (text === '') return GITHUB_DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return r.fail(path, `must be a URL like ${GITHUB_DEFAULT_API_URL}, got ${JSON.stringify(text)}`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) r.fail(path, 'must be an https:// URL (http:// only to 127.0.0.1 or localhost)');
  if (url.username || url.password || url.search || url.hash) r.fail(path, 'must not hold credentials, a query or a fragment (the token goes in token_file)');
  return url.href.replace(/\/+$/, '');
}

function catchUpInterval(r: RawReader, path: string[]): number {
  return r.durationBetween(path, 10_000, 24 * 3600_000, '10s and 24h', '5m') ?? FORGE_DEFAULT_CATCH_UP_MS;
}
