import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { GithubForgeConfig, GithubRule } from '@app/storage';
import { sha256Hex } from '../state';
import { TRIGGERS_OPTIONS, TriggersOptions } from '../triggers.options';
import { FORGE_BRANCHES, FORGE_TASKS, ForgeBranches, ForgeTasks } from './forge-tasks';
import { GITHUB_API, GithubApi } from './github-api';
import { changeLink, GithubLink, listLinks, PullRecord, readLink, writeLink } from './github-store';
import { pullBody, pullTitle } from './pull-summary';

/** What one sync of a task did (the logs and the tests read it). */
export interface PullSync {
  outcome: 'not_forge' | 'nothing_to_push' | 'opened' | 'updated' | 'unchanged' | 'stopped' | 'failed';
  number?: number;
  ready?: boolean;
  error?: string;
}

/**
 * The outbound side of the GitHub adapter (docs/triggers.md, "Pull requests"): for the task of an
 * issue whose rule has `pull_request:`, after each attempt and at the loop's end it pushes the
 * task's branch forward, opens a draft pull request ("Closes #n", the commits and the task's
 * progress), keeps its body current, and marks it ready for review once the task is done (its
 * completion criteria passed). The pull request gets a `pull` link, so failed checks and change
 * requests on it reach the task (GithubInboundService).
 *
 * Reconcile, not fire-and-forget: the issue's link records each step before and after GitHub is
 * asked (a create interrupted by a crash is found again by its branch, never opened twice), and
 * the server catches up at start and every `catch_up_interval`: conditional GETs (ETags) of each
 * tracked issue and pull request stop the task of one closed while no webhook came, then a sync.
 */
@Injectable()
export class GithubPullRequests implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('forge');
  /** One sync of a task at a time (attempt ends, loop ends and catch-ups queue behind each other). */
  private readonly chains = new Map<string, Promise<unknown>>();
  private timer?: NodeJS.Timeout;
  /** The running catch-up (tests and shutdown may await it). */
  caughtUp?: Promise<void>;

  constructor(
    @Inject(TRIGGERS_OPTIONS) private readonly opts: TriggersOptions,
    @Optional() @Inject(FORGE_TASKS) private readonly tasks?: ForgeTasks,
    @Optional() @Inject(FORGE_BRANCHES) private readonly branches?: ForgeBranches,
    @Optional() @Inject(GITHUB_API) private readonly api?: GithubApi,
  ) {}

  private get config(): GithubForgeConfig | undefined {
    const cfg = this.opts.forge?.github;
    return cfg && this.tasks && this.branches && this.api && Object.values(cfg.rules).some((r) => r.pull_request) ? cfg : undefined;
  }

  onApplicationBootstrap(): void {
    const cfg = this.config;
    if (!cfg || !this.opts.runSchedules) return;
    this.caughtUp = this.catchUp();
    this.timer = setInterval(() => {
      this.caughtUp = this.catchUp();
    }, cfg.catch_up_interval_ms);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** After an attempt or a loop of a task ended: sync its pull request (no-op for other tasks). */
  taskChanged(projectId: string, taskId: string): Promise<PullSync> {
    const cfg = this.config;
    if (!cfg) return Promise.resolve({ outcome: 'not_forge' });
    const found = this.issueLinkOf(cfg, projectId, taskId);
    if (!found) return Promise.resolve({ outcome: 'not_forge' });
    return this.serial(found.link, () => this.sync(found.link.repository, found.link.number, found.rule));
  }

  /** Looks at every tracked issue and pull request on GitHub (conditional GETs), then syncs each task. */
  async catchUp(): Promise<void> {
    const cfg = this.config;
    if (!cfg) return;
    const links = listLinks(this.opts.root, (path, err) => this.logger.warn(`forge link ${path}: ${err.message}`));
    for (const link of links) {
      const rule = cfg.rules[link.rule];
      if (link.kind !== 'issue' || link.state !== 'started' || !rule?.pull_request) continue;
      await this.serial(link, async () => {
        try {
          if (await this.closedOnGithub(link)) return;
        } catch (err) {
          this.logger.warn(`catch-up of ${link.repository}#${link.number}: ${(err as Error).message}`);
          return;
        }
        await this.sync(link.repository, link.number, rule);
      });
    }
  }

  private issueLinkOf(cfg: GithubForgeConfig, projectId: string, taskId: string): { link: GithubLink; rule: GithubRule } | undefined {
    for (const link of listLinks(this.opts.root)) {
      const rule = cfg.rules[link.rule];
      if (link.kind === 'issue' && link.project_id === projectId && link.task_id === taskId && rule?.pull_request) return { link, rule };
    }
    return undefined;
  }

  private serial<T>(link: GithubLink, op: () => Promise<T>): Promise<T> {
    const key = `${link.project_id}/${link.task_id}`;
    const next = (this.chains.get(key) ?? Promise.resolve()).then(op, op);
    const tail = next.catch(() => undefined);
    this.chains.set(key, tail);
    void tail.then(() => this.chains.get(key) === tail && this.chains.delete(key));
    return next;
  }

  /** The issue or its pull request was closed while no webhook reached us: stop the task, as the webhook would. */
  private async closedOnGithub(link: GithubLink): Promise<boolean> {
    const api = this.api!;
    const issue = await api.getIssue(link.repository, link.number, link.etag);
    let closed = issue.changed && issue.data.state === 'closed' ? `issue ${link.repository}#${link.number} was closed` : undefined;
    if (issue.changed) changeLink(this.opts.root, link.repository, link.number, (l) => ({ ...l, etag: issue.etag }));
    const pull = link.pull;
    if (!closed && pull?.number && pull.state === 'open') {
      const got = await api.getPull(link.repository, pull.number, pull.etag);
      if (got.changed) {
        const state = got.data.state === 'closed' ? 'closed' : 'open';
        changeLink(this.opts.root, link.repository, link.number, (l) => ({ ...l, pull: { ...l.pull!, etag: got.etag, state } }));
        if (state === 'closed') closed = `pull request ${link.repository}#${pull.number} was closed`;
      }
    }
    if (!closed) return false;
    this.logger.log(`catch-up: ${closed}; stopping task ${link.task_id}`);
    await this.tasks!.stop(link.project_id, link.task_id, `github: ${closed}`);
    changeLink(this.opts.root, link.repository, link.number, (l) => ({ ...l, state: 'stopped' }));
    if (pull?.number) changeLink(this.opts.root, link.repository, pull.number, (l) => ({ ...l, state: 'stopped' }));
    return true;
  }

  private async sync(repository: string, number: number, rule: GithubRule): Promise<PullSync> {
    const link = readLink(this.opts.root, repository, number);
    if (!link || link.state !== 'started') return { outcome: 'stopped' };
    try {
      // a pull request closed on GitHub (its webhook stopped the task) is not pushed to or edited again
      if (link.pull?.number && readLink(this.opts.root, repository, link.pull.number)?.state === 'stopped') return { outcome: 'stopped', number: link.pull.number };
      return await this.syncLink(link, rule);
    } catch (err) {
      const error = (err as Error).message;
      this.logger.warn(`pull request of ${repository}#${number} (task ${link.task_id}): ${error}`);
      await this.tasks!.note(link.project_id, link.task_id, `pull request not updated: ${error}`).catch(() => undefined);
      return { outcome: 'failed', error };
    }
  }

  private async syncLink(link: GithubLink, rule: GithubRule): Promise<PullSync> {
    const { project_id: projectId, task_id: taskId } = link;
    const tasks = this.tasks!;
    const branch = await this.branches!.branchOf(projectId, taskId);
    if (!branch || !branch.commits.length) return { outcome: 'nothing_to_push' };
    const base = rule.pull_request!.base || branch.base_branch;
    if (!base) throw new Error(`the task's worktree has no base branch: set pull_request.base in rule ${rule.name}`);
    const pushed = await this.branches!.push(branch.repo, rule.pull_request!.remote, branch.branch);
    const done = tasks.isDone(projectId, taskId);
    const body = pullBody(link, branch.commits, tasks.recentProgress(projectId, taskId, 5));
    let pull = link.pull;
    let outcome: PullSync['outcome'] = 'unchanged';
    if (!pull?.number) {
      pull = await this.open(link, branch.branch, base, body, done);
      outcome = 'opened';
      await tasks.note(projectId, taskId, `opened ${pull.draft ? 'draft ' : ''}pull request #${pull.number}: ${pull.url} (branch ${branch.branch} at ${pushed.commit.slice(0, 12)})`);
    } else if (pull.body_sha !== sha256Hex(body)) {
      await this.api!.updatePull(link.repository, pull.number, { body });
      pull = this.record(link, { ...pull, body_sha: sha256Hex(body) });
      outcome = 'updated';
    } else if (pushed.updated) {
      outcome = 'updated';
    }
    if (done && !pull.ready_at) {
      const { isDraft } = await this.api!.markReady(pull.node_id!);
      if (!isDraft) {
        pull = this.record(link, { ...pull, draft: false, ready_at: new Date().toISOString() });
        await tasks.note(projectId, taskId, `pull request #${pull.number} marked ready for review: the task is done (its completion criteria passed)`);
      }
    }
    this.logger.log(`pull request #${pull.number} of ${link.repository}#${link.number} (task ${taskId}): ${outcome}${pull.ready_at ? ', ready' : ', draft'}`);
    return { outcome, number: pull.number, ready: !!pull.ready_at };
  }

  /** Opens the pull request (or finds the one a crash left unrecorded); its `pull` link routes feedback to the task. */
  private async open(link: GithubLink, branch: string, base: string, body: string, done: boolean): Promise<PullRecord> {
    const api = this.api!;
    let found = link.pull?.state === 'opening' ? (await api.pullsWithHead(link.repository, branch)).find((p) => p.head.ref === branch) : undefined;
    if (!found) {
      this.record(link, { state: 'opening', branch });
      found = await api.createPull(link.repository, { title: pullTitle(link), head: branch, base, body, draft: !done });
    }
    const now = new Date().toISOString();
    const draft = found.draft ?? !done;
    const pull = this.record(link, {
      state: 'open',
      branch,
      number: found.number,
      node_id: found.node_id,
      url: found.html_url,
      draft,
      body_sha: sha256Hex(body),
      ...(draft ? {} : { ready_at: now }),
    });
    writeLink(this.opts.root, {
      repository: link.repository,
      number: found.number,
      kind: 'pull',
      project_id: link.project_id,
      task_id: link.task_id,
      rule: link.rule,
      feedback_rounds: 0,
      state: 'started',
      branch,
      created_at: now,
      updated_at: now,
    });
    return pull;
  }

  private record(link: GithubLink, pull: PullRecord): PullRecord {
    changeLink(this.opts.root, link.repository, link.number, (l) => ({ ...l, pull }));
    return pull;
  }
}
