import type { GithubForgeConfig, GithubRule } from '@app/storage';

/**
 * What a GitHub webhook delivery asks for (docs/triggers.md), decided from the event name GitHub
 * sends in `X-GitHub-Event` and the payload's typed fields only. Pure: no disk, no tasks.
 */
export type GithubAction =
  | { kind: 'ignore'; reason: string }
  | { kind: 'pong' }
  | { kind: 'start'; rule: GithubRule; repository: string; number: number; vars: IssueVars }
  | { kind: 'comment'; repository: string; number: number; body: string }
  | { kind: 'feedback'; repository: string; numbers: number[]; body: string; round: string }
  | { kind: 'stop'; repository: string; number: number; reason: string };

/** The values an issue rule's prompt template sees as `{{payload.<name>}}`. */
export interface IssueVars {
  repository: string;
  number: number;
  title: string;
  body: string;
  url: string;
  author: string;
  labels: string[];
}

/** The last characters of a check run's output text sent to the task. */
export const CHECK_TEXT_TAIL_CHARS = 4000;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);

function tail(text: string, max: number): string {
  return text.length > max ? `…${text.slice(text.length - max)}` : text;
}

function mentions(body: string, bot: string): boolean {
  const login = bot.toLowerCase();
  return body
    .toLowerCase()
    .split(/[^a-z0-9@[\]-]+/)
    .some((w) => w === `@${login}`);
}

function issueEvent(cfg: GithubForgeConfig, repository: string, p: Obj): GithubAction {
  const issue = obj(p.issue);
  const number = num(issue.number);
  if (number === undefined) return { kind: 'ignore', reason: 'issue without a number' };
  const action = str(p.action);
  if (action === 'closed') return { kind: 'stop', repository, number, reason: `issue ${repository}#${number} closed` };
  if (action !== 'labeled') return { kind: 'ignore', reason: `issues action ${action || '(none)'}` };
  const label = str(obj(p.label).name);
  const rule = Object.values(cfg.rules).find((r) => r.repository.toLowerCase() === repository.toLowerCase() && r.label === label);
  if (!rule) return { kind: 'ignore', reason: `no rule for label ${JSON.stringify(label)} in ${repository}` };
  const labels = Array.isArray(issue.labels) ? issue.labels.map((l) => str(obj(l).name)).filter(Boolean) : [];
  const vars = { repository, number, title: str(issue.title), body: str(issue.body), url: str(issue.html_url), author: str(obj(issue.user).login), labels };
  return { kind: 'start', rule, repository, number, vars };
}

function checkRunEvent(repository: string, p: Obj): GithubAction {
  const run = obj(p.check_run);
  if (str(p.action) !== 'completed' || str(run.conclusion) !== 'failure') return { kind: 'ignore', reason: `check_run ${str(p.action)} ${str(run.conclusion)}`.trim() };
  const numbers = (Array.isArray(run.pull_requests) ? run.pull_requests : []).map((pr) => num(obj(pr).number)).filter((n): n is number => n !== undefined);
  if (numbers.length === 0) return { kind: 'ignore', reason: 'check run of no pull request' };
  const out = obj(run.output);
  const lines = [`CI check failed: ${str(run.name) || '(unnamed)'} (conclusion: failure) on ${repository} pull request #${numbers.join(', #')}`];
  if (str(run.html_url)) lines.push(str(run.html_url));
  if (str(out.title)) lines.push('', str(out.title));
  if (str(out.summary)) lines.push('', tail(str(out.summary), CHECK_TEXT_TAIL_CHARS));
  if (str(out.text)) lines.push('', 'Output (tail):', tail(str(out.text), CHECK_TEXT_TAIL_CHARS));
  lines.push('', 'Fix the failure and push again.');
  // the checks of one commit are one round: several failing checks of the same push count once
  return { kind: 'feedback', repository, numbers, body: lines.join('\n'), round: `sha:${str(run.head_sha)}` };
}

function reviewEvent(repository: string, p: Obj): GithubAction {
  const review = obj(p.review);
  const number = num(obj(p.pull_request).number);
  if (str(p.action) !== 'submitted' || str(review.state).toLowerCase() !== 'changes_requested' || number === undefined) {
    return { kind: 'ignore', reason: `pull_request_review ${str(p.action)} ${str(review.state)}`.trim() };
  }
  const who = str(obj(review.user).login) || 'a reviewer';
  const body = [`Changes requested by ${who} on ${repository} pull request #${number}:`, '', str(review.body) || '(no review text)', '', 'Address the review and push again.'].join('\n');
  return { kind: 'feedback', repository, numbers: [number], body, round: `review:${String(review.id ?? '')}` };
}

/** Decides what one delivery asks for; anything not listed is ignored. */
export function decideGithubEvent(cfg: GithubForgeConfig, event: string, payload: unknown): GithubAction {
  const p = obj(payload);
  if (event === 'ping') return { kind: 'pong' };
  const repository = str(obj(p.repository).full_name);
  if (!repository) return { kind: 'ignore', reason: `${event} without a repository` };
  if (!Object.values(cfg.rules).some((r) => r.repository.toLowerCase() === repository.toLowerCase())) return { kind: 'ignore', reason: `no rule for repository ${repository}` };
  switch (event) {
    case 'issues':
      return issueEvent(cfg, repository, p);
    case 'issue_comment': {
      const number = num(obj(p.issue).number);
      const body = str(obj(p.comment).body);
      const author = str(obj(obj(p.comment).user).login);
      if (str(p.action) !== 'created' || number === undefined) return { kind: 'ignore', reason: `issue_comment ${str(p.action)}` };
      if (author.toLowerCase() === cfg.bot.toLowerCase()) return { kind: 'ignore', reason: "the bot's own comment" };
      if (!mentions(body, cfg.bot)) return { kind: 'ignore', reason: `comment does not mention @${cfg.bot}` };
      return { kind: 'comment', repository, number, body: `Comment by ${author || 'someone'} on ${repository}#${number}:\n\n${body}` };
    }
    case 'check_run':
      return checkRunEvent(repository, p);
    case 'pull_request_review':
      return reviewEvent(repository, p);
    case 'pull_request': {
      const number = num(obj(p.pull_request).number);
      if (str(p.action) !== 'closed' || number === undefined) return { kind: 'ignore', reason: `pull_request ${str(p.action)}` };
      return { kind: 'stop', repository, number, reason: `pull request ${repository}#${number} closed` };
    }
    default:
      return { kind: 'ignore', reason: `event ${event} is not handled` };
  }
}
