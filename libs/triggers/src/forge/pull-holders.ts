import type { GithubForgeConfig } from '@app/storage';
import { changeLink, changeTaskPull, GithubLink, listLinks, listTaskPulls, PullRecord, readLink, readTaskPull, TaskPullLink } from './github-store';

/**
 * Where a task's pull request is recorded, and what it is opened with: the link of the issue that
 * started the task (a forge rule with `pull_request:`), or the task's own record (a pull request
 * asked for through the API). Both are re-read before each step and written atomically.
 */
export interface PullHolder {
  projectId: string;
  taskId: string;
  repository: string;
  remote: string;
  /** '' = the branch the task's worktree started from. */
  base: string;
  title: string;
  /** The issue the pull request closes. */
  closes?: number;
  /** The rule's name, or `request`. */
  source: string;
  /** `started` or `stopped`. */
  state: string;
  pull?: PullRecord;
  /** The ETag of GitHub's last answer about the issue. */
  issueEtag?: string;
  /** The holder as on disk now (undefined when its record is gone). */
  reload(): PullHolder | undefined;
  save(change: { pull?: PullRecord; issueEtag?: string; state?: string }): void;
}

export function issueHolder(root: string, cfg: GithubForgeConfig, link: GithubLink): PullHolder | undefined {
  const rule = cfg.rules[link.rule];
  if (link.kind !== 'issue' || !rule?.pull_request) return undefined;
  return {
    projectId: link.project_id,
    taskId: link.task_id,
    repository: link.repository,
    remote: rule.pull_request.remote,
    base: rule.pull_request.base,
    title: link.title?.trim() || `Task ${link.task_id} for #${link.number}`,
    closes: link.number,
    source: link.rule,
    state: link.state,
    pull: link.pull,
    issueEtag: link.etag,
    reload: () => {
      const again = readLink(root, link.repository, link.number);
      return again && issueHolder(root, cfg, again);
    },
    save: (c) => {
      changeLink(root, link.repository, link.number, (l) => ({ ...l, ...(c.pull ? { pull: c.pull } : {}), ...(c.issueEtag ? { etag: c.issueEtag } : {}), ...(c.state ? { state: c.state } : {}) }));
    },
  };
}

export function taskHolder(root: string, rec: TaskPullLink): PullHolder {
  return {
    projectId: rec.project_id,
    taskId: rec.task_id,
    repository: rec.repository,
    remote: rec.remote,
    base: rec.base,
    title: rec.title,
    source: 'request',
    state: rec.state,
    pull: rec.pull,
    reload: () => {
      const again = readTaskPull(root, rec.project_id, rec.task_id);
      return again && taskHolder(root, again);
    },
    save: (c) => {
      changeTaskPull(root, rec.project_id, rec.task_id, (r) => ({ ...r, ...(c.pull ? { pull: c.pull } : {}), ...(c.state ? { state: c.state } : {}) }));
    },
  };
}

/** The holder of a task's pull request, if it has one: its issue's link first, then its own record. */
export function holderOf(root: string, cfg: GithubForgeConfig, projectId: string, taskId: string): PullHolder | undefined {
  for (const link of listLinks(root)) {
    if (link.project_id === projectId && link.task_id === taskId) {
      const holder = issueHolder(root, cfg, link);
      if (holder) return holder;
    }
  }
  const own = readTaskPull(root, projectId, taskId);
  return own && taskHolder(root, own);
}

/** Every holder with a running task (the catch-up's list); damaged records are reported and skipped. */
export function activeHolders(root: string, cfg: GithubForgeConfig, onBad: (path: string, err: Error) => void): PullHolder[] {
  const fromIssues = listLinks(root, onBad).map((l) => issueHolder(root, cfg, l));
  const fromTasks = listTaskPulls(root, onBad).map((r) => taskHolder(root, r));
  return [...fromIssues, ...fromTasks].filter((h): h is PullHolder => !!h && h.state === 'started');
}
