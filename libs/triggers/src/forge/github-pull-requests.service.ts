import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { checkGitRemote, checkGithubBranch, checkGithubRepository, type GithubForgeConfig } from '@app/storage';
import { sha256Hex } from '../state';
import { TriggerError } from '../task-starter';
import { TRIGGERS_OPTIONS, TriggersOptions } from '../triggers.options';
import { FORGE_BRANCHES, FORGE_TASKS, ForgeBranches, ForgeTasks } from './forge-tasks';
import { GITHUB_API, GithubApi, githubRepositoryOf } from './github-api';
import { PullRecord, readLink, writeLink, writeTaskPull } from './github-store';
import { activeHolders, holderOf, PullHolder, taskHolder } from './pull-holders';
import { pullBody } from './pull-summary';

/** What one sync of a task did (the logs, the API and the tests read it). */
export interface PullSync {
  outcome: 'not_forge' | 'nothing_to_push' | 'opened' | 'updated' | 'unchanged' | 'stopped' | 'failed';
  number?: number;
  url?: string;
  ready?: boolean;
  error?: string;
}

/** What POST …/tasks/<t>/pull-request may say; every field has a default. */
export interface PullRequestAsk {
  /** `owner/name`; default: read from the remote's URL (github.com, or the host of forge.github.api_url). */
  repository?: string;
  remote?: string;
  base?: string;
}

/**
 * The pull-request mode (docs/triggers.md, "Pull requests"): for a task whose work goes to GitHub —
 * the task of an issue whose rule has `pull_request:`, or a task someone asked a pull request for —
 * after each attempt and at the loop's end it pushes the task's branch forward, opens a draft pull
 * request (the commits and the task's progress; "Closes #n" for an issue), keeps its body current,
 * and marks it ready for review once the task is done (its completion criteria passed). The pull
 * request gets a `pull` link, so failed checks and change requests on it reach the task.
 *
 * Reconcile, not fire-and-forget: the holder records each step before and after GitHub is asked
 * (a create interrupted by a crash is found again by its branch, never opened twice), and the
 * server catches up at start and every `catch_up_interval`: conditional GETs (ETags) stop the task
 * of an issue or pull request closed while no webhook came, then a sync.
 */
@Injectable()
export class GithubPullRequests implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('forge');
  /** One sync of a task at a time (attempt ends, loop ends, requests and catch-ups queue behind each other). */
  private readonly chains = new Map<string, Promise<unknown>>();
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(TRIGGERS_OPTIONS) private readonly opts: TriggersOptions,
    @Optional() @Inject(FORGE_TASKS) private readonly tasks?: ForgeTasks,
    @Optional() @Inject(FORGE_BRANCHES) private readonly branches?: ForgeBranches,
    @Optional() @Inject(GITHUB_API) private readonly api?: GithubApi,
  ) {}

  /** The forge config, when pull requests can be opened (a token is configured). */
  private get config(): GithubForgeConfig | undefined {
    const cfg = this.opts.forge?.github;
    return cfg && this.tasks && this.branches && this.api ? cfg : undefined;
  }

  onApplicationBootstrap(): void {
    const cfg = this.config;
    if (!cfg || !this.opts.runSchedules) return;
    const run = () => void this.catchUp().catch((err: Error) => this.logger.warn(`catch-up: ${err.message}`));
    run();
    this.timer = setInterval(run, cfg.catch_up_interval_ms);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** After an attempt or a loop of a task ended: sync its pull request (no-op for other tasks). */
  taskChanged(projectId: string, taskId: string): Promise<PullSync> {
    const cfg = this.config;
    const holder = cfg && holderOf(this.opts.root, cfg, projectId, taskId);
    if (!holder) return Promise.resolve({ outcome: 'not_forge' });
    return this.serial(holder, () => this.sync(holder));
  }

  /** Opens (or brings up to date) the pull request of a worktree task: the merge's pull-request mode. */
  async openForTask(projectId: string, taskId: string, ask: PullRequestAsk): Promise<PullSync> {
    const cfg = this.config;
    if (!cfg) throw new TriggerError('CONFLICT', 'no GitHub token is configured: set forge.github.token_file or CONDUCTOR_GITHUB_TOKEN (docs/triggers.md)');
    const remote = ask.remote === undefined ? 'origin' : field('remote', checkGitRemote, ask.remote);
    const base = ask.base === undefined ? '' : field('base', checkGithubBranch, ask.base);
    const repository = ask.repository === undefined ? undefined : field('repository', checkGithubRepository, ask.repository);
    let holder = holderOf(this.opts.root, cfg, projectId, taskId);
    if (!holder) {
      const branch = await this.branches!.readyBranch(projectId, taskId);
      if (!branch) throw new TriggerError('CONFLICT', 'the task has no worktree: a pull request needs a task started with isolation "worktree"');
      const now = new Date().toISOString();
      const rec = {
        project_id: projectId,
        task_id: taskId,
        repository: repository ?? githubRepositoryOf(await this.branches!.remoteUrl(branch.repo, remote), cfg.api_url),
        remote,
        base,
        title: this.tasks!.title(projectId, taskId),
        state: 'started',
        created_at: now,
        updated_at: now,
      };
      writeTaskPull(this.opts.root, rec);
      holder = taskHolder(this.opts.root, rec);
    }
    const h = holder;
    return this.serial(h, () => this.sync(h));
  }

  /** The task's recorded pull request (GET …/pull-request). */
  recorded(projectId: string, taskId: string): { repository: string; source: string; state: string; pull?: PullRecord } | undefined {
    const cfg = this.opts.forge?.github;
    const h = cfg && holderOf(this.opts.root, cfg, projectId, taskId);
    return h && { repository: h.repository, source: h.source, state: h.state, ...(h.pull ? { pull: h.pull } : {}) };
  }

  /** Looks at every tracked issue and pull request on GitHub (conditional GETs), then syncs each task. */
  async catchUp(): Promise<void> {
    const cfg = this.config;
    if (!cfg) return;
    for (const holder of activeHolders(this.opts.root, cfg, (path, err) => this.logger.warn(`forge record ${path}: ${err.message}`))) {
      await this.serial(holder, async () => {
        try {
          if (await this.closedOnGithub(holder)) return;
        } catch (err) {
          this.logger.warn(`catch-up of ${holder.repository} (task ${holder.taskId}): ${(err as Error).message}`);
          return;
        }
        await this.sync(holder);
      });
    }
  }

  private serial<T>(holder: PullHolder, op: () => Promise<T>): Promise<T> {
    const key = `${holder.projectId}/${holder.taskId}`;
    const next = (this.chains.get(key) ?? Promise.resolve()).then(op, op);
    const tail = next.catch(() => undefined);
    this.chains.set(key, tail);
    void tail.then(() => this.chains.get(key) === tail && this.chains.delete(key));
    return next;
  }

  /** The issue or the pull request was closed while no webhook reached us: stop the task, as the webhook would. */
  private async closedOnGithub(holder: PullHolder): Promise<boolean> {
    const api = this.api!;
    let closed: string | undefined;
    if (holder.closes !== undefined) {
      const issue = await api.getIssue(holder.repository, holder.closes, holder.issueEtag);
      if (issue.changed) holder.save({ issueEtag: issue.etag });
      if (issue.changed && issue.data.state === 'closed') closed = `issue ${holder.repository}#${holder.closes} was closed`;
    }
    const pull = holder.pull;
    if (!closed && pull?.number && pull.state === 'open') {
      const got = await api.getPull(holder.repository, pull.number, pull.etag);
      if (got.changed) {
        const state = got.data.state === 'closed' ? 'closed' : 'open';
        holder.save({ pull: { ...(holder.reload()?.pull ?? pull), etag: got.etag, state } });
        if (state === 'closed') closed = `pull request ${holder.repository}#${pull.number} was closed`;
      }
    }
    if (!closed) return false;
    this.logger.log(`catch-up: ${closed}; stopping task ${holder.taskId}`);
    await this.tasks!.stop(holder.projectId, holder.taskId, `github: ${closed}`);
    holder.save({ state: 'stopped' });
    const pullLink = pull?.number ? readLink(this.opts.root, holder.repository, pull.number) : undefined;
    if (pullLink) writeLink(this.opts.root, { ...pullLink, state: 'stopped', updated_at: new Date().toISOString() });
    return true;
  }

  private async sync(stale: PullHolder): Promise<PullSync> {
    const holder = stale.reload();
    if (!holder || holder.state !== 'started') return { outcome: 'stopped' };
    const number = holder.pull?.number;
    // a pull request closed on GitHub (its webhook stopped the task) is not pushed to or edited again
    if (number && readLink(this.opts.root, holder.repository, number)?.state === 'stopped') return { outcome: 'stopped', number, url: holder.pull?.url };
    try {
      return await this.syncHolder(holder);
    } catch (err) {
      const error = (err as Error).message;
      this.logger.warn(`pull request of task ${holder.taskId} (${holder.repository}): ${error}`);
      await this.tasks!.note(holder.projectId, holder.taskId, `pull request not updated: ${error}`).catch(() => undefined);
      return { outcome: 'failed', error };
    }
  }

  private async syncHolder(holder: PullHolder): Promise<PullSync> {
    const { projectId, taskId } = holder;
    const tasks = this.tasks!;
    const branch = await this.branches!.readyBranch(projectId, taskId);
    if (!branch || !branch.commits.length) return { outcome: 'nothing_to_push', number: holder.pull?.number, url: holder.pull?.url };
    const base = holder.base || branch.base_branch;
    if (!base) throw new Error("the task's worktree has no base branch: give the pull request a base");
    const pushed = await this.branches!.push(branch.repo, holder.remote, branch.branch);
    const done = tasks.isDone(projectId, taskId);
    const body = pullBody(holder, branch.commits, tasks.recentProgress(projectId, taskId, 5));
    let pull = holder.pull;
    let outcome: PullSync['outcome'] = 'unchanged';
    if (!pull?.number) {
      pull = await this.open(holder, branch.branch, base, body, done);
      outcome = 'opened';
      await tasks.note(projectId, taskId, `opened ${pull.draft ? 'draft ' : ''}pull request #${pull.number}: ${pull.url} (branch ${branch.branch} at ${pushed.commit.slice(0, 12)})`);
    } else if (pull.body_sha !== sha256Hex(body)) {
      await this.api!.updatePull(holder.repository, pull.number, { body });
      pull = { ...pull, body_sha: sha256Hex(body) };
      holder.save({ pull });
      outcome = 'updated';
    } else if (pushed.updated) {
      outcome = 'updated';
    }
    if (done && !pull.ready_at) {
      const { isDraft } = await this.api!.markReady(pull.node_id!);
      if (!isDraft) {
        pull = { ...pull, draft: false, ready_at: new Date().toISOString() };
        holder.save({ pull });
        await tasks.note(projectId, taskId, `pull request #${pull.number} marked ready for review: the task is done (its completion criteria passed)`);
      }
    }
    this.logger.log(`pull request #${pull.number} of ${holder.repository} (task ${taskId}): ${outcome}${pull.ready_at ? ', ready' : ', draft'}`);
    return { outcome, number: pull.number, url: pull.url, ready: !!pull.ready_at };
  }

  /** Opens the pull request (or finds the one a crash left unrecorded); its `pull` link routes feedback to the task. */
  private async open(holder: PullHolder, branch: string, base: string, body: string, done: boolean): Promise<PullRecord> {
    const api = this.api!;
    let found = holder.pull?.state === 'opening' ? (await api.pullsWithHead(holder.repository, branch)).find((p) => p.head.ref === branch) : undefined;
    if (!found) {
      holder.save({ pull: { state: 'opening', branch } });
      found = await api.createPull(holder.repository, { title: holder.title, head: branch, base, body, draft: !done });
    }
    const now = new Date().toISOString();
    const draft = found.draft ?? !done;
    const pull: PullRecord = { state: 'open', branch, number: found.number, node_id: found.node_id, url: found.html_url, draft, body_sha: sha256Hex(body), ...(draft ? {} : { ready_at: now }) };
    // the pull link first: once the holder says `open`, feedback already routes to the task
    writeLink(this.opts.root, {
      repository: holder.repository,
      number: found.number,
      kind: 'pull',
      project_id: holder.projectId,
      task_id: holder.taskId,
      rule: holder.source,
      feedback_rounds: 0,
      state: 'started',
      branch,
      created_at: now,
      updated_at: now,
    });
    holder.save({ pull });
    return pull;
  }
}

/** A request field through its shared check: a bad one is a 400 naming it. */
function field(name: string, check: (v: string) => string, value: unknown): string {
  try {
    return check(typeof value === 'string' ? value.trim() : '');
  } catch (err) {
    throw new TriggerError('BAD_REQUEST', `${name} ${(err as Error).message}`);
  }
}
