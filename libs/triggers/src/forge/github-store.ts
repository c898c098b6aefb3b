import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';
import { sha256Hex, triggersStateDir } from '../state';

/**
 * The durable issue/PR ↔ task mapping of the GitHub adapter: one file per issue or pull request,
 * `<runs root>/.triggers/forge/github/links/<sha256 of repo#number>.json`, written atomically. A
 * damaged record is that record's problem: reading it throws for its event only, and listings skip it.
 */
export interface GithubLink {
  repository: string;
  number: number;
  /** `issue`: the issue that started the task; `pull`: the pull request the orchestrator opened. */
  kind: 'issue' | 'pull';
  project_id: string;
  task_id: string;
  rule: string;
  /** CI failures and change requests routed to the task so far. */
  feedback_rounds: number;
  /** The feedback round last counted (a commit's checks, or one review): a repeat does not count again. */
  last_round?: string;
  /** Set once the retry cap sent the task to needs_input. */
  escalated_at?: string;
  /** `claimed` (written before the task starts), `started`, `stopped`. */
  state: string;
  /** The pushed branch, for a pull request. */
  branch?: string;
  /** The issue's title (the pull request's title). */
  title?: string;
  /** An issue's pull request, once the orchestrator opens one (docs/triggers.md, "Pull requests"). */
  pull?: PullRecord;
  /** The ETag of GitHub's last answer about this issue (the catch-up asks "changed since?"). */
  etag?: string;
  created_at: string;
  updated_at: string;
}

export interface PullRecord {
  /** `opening`: a create was sent and its answer not yet recorded (a crash here is resolved by looking the branch up). */
  state: 'opening' | 'open' | 'closed';
  branch: string;
  number?: number;
  node_id?: string;
  url?: string;
  draft?: boolean;
  /** When the orchestrator marked it ready for review (or opened it ready: the task was done). */
  ready_at?: string;
  /** sha256 of the body last sent (a change is sent once). */
  body_sha?: string;
  etag?: string;
}

export function githubStateDir(root: string): string {
  return join(triggersStateDir(root), 'forge', 'github');
}

function linksDir(root: string): string {
  return join(githubStateDir(root), 'links');
}

function linkPath(root: string, repository: string, number: number): string {
  return join(linksDir(root), `${sha256Hex(`${repository.toLowerCase()}#${number}`)}.json`);
}

function parseLink(text: string, path: string): GithubLink {
  const rec = JSON.parse(text) as GithubLink;
  if (typeof rec?.repository !== 'string' || typeof rec.number !== 'number' || typeof rec.task_id !== 'string' || typeof rec.project_id !== 'string') {
    throw new Error(`forge link record ${path} is damaged`);
  }
  return { ...rec, feedback_rounds: typeof rec.feedback_rounds === 'number' ? rec.feedback_rounds : 0 };
}

export function readLink(root: string, repository: string, number: number): GithubLink | undefined {
  const path = linkPath(root, repository, number);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseLink(text, path);
}

export function writeLink(root: string, link: GithubLink): void {
  mkdirSync(linksDir(root), { recursive: true });
  writeFileAtomic(linkPath(root, link.repository, link.number), `${JSON.stringify(link, null, 2)}\n`);
}

/**
 * Re-reads a link and writes `fn`'s change of it, in one synchronous step (nothing else of this
 * process runs between the read and the write), so concurrent handlers never lose each other's fields.
 */
export function changeLink(root: string, repository: string, number: number, fn: (link: GithubLink) => GithubLink): GithubLink | undefined {
  const link = readLink(root, repository, number);
  if (!link) return undefined;
  const next = { ...fn(link), updated_at: new Date().toISOString() };
  writeLink(root, next);
  return next;
}

export function removeLink(root: string, repository: string, number: number): void {
  rmSync(linkPath(root, repository, number), { force: true });
}

/** Every readable link; damaged ones are reported through `onBad` and skipped. */
export function listLinks(root: string, onBad?: (path: string, err: Error) => void): GithubLink[] {
  let names: string[];
  try {
    names = readdirSync(linksDir(root)).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: GithubLink[] = [];
  for (const name of names.sort()) {
    const path = join(linksDir(root), name);
    try {
      out.push(parseLink(readFileSync(path, 'utf8'), path));
    } catch (err) {
      onBad?.(path, err as Error);
    }
  }
  return out;
}

function deliveriesDir(root: string): string {
  return join(githubStateDir(root), 'deliveries');
}

function deliveryPath(root: string, id: string): string {
  return join(deliveriesDir(root), `${sha256Hex(id)}.json`);
}

/** True when the delivery id was recorded before (GitHub redelivers with the same `X-GitHub-Delivery`). */
export function deliverySeen(root: string, id: string): boolean {
  try {
    statSync(deliveryPath(root, id));
    return true;
  } catch {
    return false;
  }
}

/** Records the delivery (durably, before it is acted on). */
export function recordDelivery(root: string, id: string, event: string): void {
  mkdirSync(deliveriesDir(root), { recursive: true });
  writeFileAtomic(deliveryPath(root, id), `${JSON.stringify({ delivery: id, event, received_at: new Date().toISOString() })}\n`);
}

/** Forgets a delivery whose handling failed, so GitHub's redelivery is acted on. */
export function forgetDelivery(root: string, id: string): void {
  rmSync(deliveryPath(root, id), { force: true });
}

/** The folder of delivery records (pruned with the trigger idempotency records). */
export function githubDeliveriesDir(root: string): string {
  return deliveriesDir(root);
}

/**
 * A pull request opened on request for a task no issue started (`POST …/tasks/<t>/pull-request`):
 * `<runs root>/.triggers/forge/github/tasks/<sha256 of project/task>.json`, written atomically.
 */
export interface TaskPullLink {
  project_id: string;
  task_id: string;
  repository: string;
  remote: string;
  /** The pull request's base; '' = the branch the task's worktree started from. */
  base: string;
  title: string;
  /** `started`, or `stopped` once its pull request was closed. */
  state: string;
  pull?: PullRecord;
  created_at: string;
  updated_at: string;
}

function taskPullsDir(root: string): string {
  return join(githubStateDir(root), 'tasks');
}

function taskPullPath(root: string, projectId: string, taskId: string): string {
  return join(taskPullsDir(root), `${sha256Hex(`${projectId}/${taskId}`)}.json`);
}

function parseTaskPull(text: string, path: string): TaskPullLink {
  const rec = JSON.parse(text) as TaskPullLink;
  if (typeof rec?.repository !== 'string' || typeof rec.task_id !== 'string' || typeof rec.project_id !== 'string') throw new Error(`forge task record ${path} is damaged`);
  return rec;
}

export function readTaskPull(root: string, projectId: string, taskId: string): TaskPullLink | undefined {
  const path = taskPullPath(root, projectId, taskId);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseTaskPull(text, path);
}

export function writeTaskPull(root: string, rec: TaskPullLink): void {
  mkdirSync(taskPullsDir(root), { recursive: true });
  writeFileAtomic(taskPullPath(root, rec.project_id, rec.task_id), `${JSON.stringify(rec, null, 2)}\n`);
}

/** Like changeLink, for a task's own record. */
export function changeTaskPull(root: string, projectId: string, taskId: string, fn: (rec: TaskPullLink) => TaskPullLink): TaskPullLink | undefined {
  const rec = readTaskPull(root, projectId, taskId);
  if (!rec) return undefined;
  const next = { ...fn(rec), updated_at: new Date().toISOString() };
  writeTaskPull(root, next);
  return next;
}

/** Every readable task record; damaged ones are reported through `onBad` and skipped. */
export function listTaskPulls(root: string, onBad?: (path: string, err: Error) => void): TaskPullLink[] {
  let names: string[];
  try {
    names = readdirSync(taskPullsDir(root)).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: TaskPullLink[] = [];
  for (const name of names.sort()) {
    const path = join(taskPullsDir(root), name);
    try {
      out.push(parseTaskPull(readFileSync(path, 'utf8'), path));
    } catch (err) {
      onBad?.(path, err as Error);
    }
  }
  return out;
}
