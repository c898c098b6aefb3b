import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';
import { sha256Hex, triggersStateDir } from '../state';
import { JsonRecords } from './json-records';

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
  /** The title (the pull request's title). */
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

const links = (root: string) =>
  new JsonRecords<GithubLink>(join(githubStateDir(root), 'links'), (rec, path) => {
    if (typeof rec?.repository !== 'string' || typeof rec.number !== 'number' || typeof rec.task_id !== 'string' || typeof rec.project_id !== 'string') {
      throw new Error(`forge link record ${path} is damaged`);
    }
    return { ...rec, feedback_rounds: typeof rec.feedback_rounds === 'number' ? rec.feedback_rounds : 0 };
  });

const linkName = (repository: string, number: number) => sha256Hex(`${repository.toLowerCase()}#${number}`);

export function readLink(root: string, repository: string, number: number): GithubLink | undefined {
  return links(root).read(linkName(repository, number));
}

export function writeLink(root: string, link: GithubLink): void {
  links(root).write(linkName(link.repository, link.number), link);
}

/** Re-reads a link and writes `fn`'s change of it in one synchronous step (JsonRecords.change). */
export function changeLink(root: string, repository: string, number: number, fn: (link: GithubLink) => GithubLink): GithubLink | undefined {
  return links(root).change(linkName(repository, number), fn);
}

export function removeLink(root: string, repository: string, number: number): void {
  rmSync(links(root).path(linkName(repository, number)), { force: true });
}

/** Every readable link; damaged ones are reported through `onBad` and skipped. */
export function listLinks(root: string, onBad?: (path: string, err: Error) => void): GithubLink[] {
  return links(root).list(onBad);
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

const taskPulls = (root: string) =>
  new JsonRecords<TaskPullLink>(join(githubStateDir(root), 'tasks'), (rec, path) => {
    if (typeof rec?.repository !== 'string' || typeof rec.task_id !== 'string' || typeof rec.project_id !== 'string') throw new Error(`forge task record ${path} is damaged`);
    return rec;
  });

const taskName = (projectId: string, taskId: string) => sha256Hex(`${projectId}/${taskId}`);

export function readTaskPull(root: string, projectId: string, taskId: string): TaskPullLink | undefined {
  return taskPulls(root).read(taskName(projectId, taskId));
}

export function writeTaskPull(root: string, rec: TaskPullLink): void {
  taskPulls(root).write(taskName(rec.project_id, rec.task_id), rec);
}

/** Like changeLink, for a task's own record. */
export function changeTaskPull(root: string, projectId: string, taskId: string, fn: (rec: TaskPullLink) => TaskPullLink): TaskPullLink | undefined {
  return taskPulls(root).change(taskName(projectId, taskId), fn);
}

/** Every readable task record; damaged ones are reported through `onBad` and skipped. */
export function listTaskPulls(root: string, onBad?: (path: string, err: Error) => void): TaskPullLink[] {
  return taskPulls(root).list(onBad);
}
