import { buildTemplate, TaskTemplate, validateTriggerName } from './triggers-config';
import type { RawReader } from './raw-config';

/** A rule of the GitHub forge adapter (docs/triggers.md): which labelled issues start which task. */
export interface GithubRule {
  name: string;
  /** `owner/name` of the repository whose events the rule takes. */
  repository: string;
  /** An issue given this label starts a task. */
  label: string;
  /** The task; its prompt is a template over the issue (`{{payload.title}}`, `{{payload.body}}`, ...). */
  task: TaskTemplate;
}

export interface GithubForgeConfig {
  /** The secret GitHub signs deliveries with (`X-Hub-Signature-256`); required. */
  webhook_secret: string;
  /** The bot's GitHub login: a comment mentioning `@<bot>` is routed to the task. */
  bot: string;
  /** CI failures and change requests routed to a task before it goes to needs_input (default 3). */
  max_feedback_rounds: number;
  rules: Record<string, GithubRule>;
}

export interface ForgeConfig {
  github?: GithubForgeConfig;
}

export const FORGE_DEFAULT_MAX_FEEDBACK_ROUNDS = 3;
/** The prompt of an issue's task when the rule gives none. */
export const FORGE_DEFAULT_PROMPT = 'GitHub issue {{payload.repository}}#{{payload.number}}: {{payload.title}}\n\n{{payload.body}}\n\n({{payload.url}})';

const REPOSITORY = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(\[bot\])?$/;

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
  only(r, p, ['webhook_secret', 'bot', 'max_feedback_rounds', 'rules']);
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
    only(r, rp, ['repository', 'label', 'task']);
    const repository = r.str([...rp, 'repository']).trim();
    if (!REPOSITORY.test(repository)) r.fail([...rp, 'repository'], `must be owner/name, got ${JSON.stringify(repository)}`);
    const label = r.str([...rp, 'label']).trim();
    if (label === '' || label.length > 100) r.fail([...rp, 'label'], 'is required (the issue label that starts a task)');
    rules[name] = { name, repository, label, task: buildTemplate(r, rp, FORGE_DEFAULT_PROMPT) };
  }
  return { github: { webhook_secret: secret, bot, max_feedback_rounds: rounds, rules } };
}
