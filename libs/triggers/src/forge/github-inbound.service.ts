import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { verify } from '@octokit/webhooks-methods';
import { randomSlug, utcStamp } from '@app/storage';
import { RecordPruner } from '../prune';
import { slugOf } from '../scheduler.service';
import { renderPrompt } from '../template';
import { TriggerError } from '../task-starter';
import { TRIGGERS_OPTIONS, TriggersOptions } from '../triggers.options';
import { FORGE_TASKS, ForgeTasks } from './forge-tasks';
import { decideGithubEvent, GithubAction } from './github-events';
import { deliverySeen, forgetDelivery, githubDeliveriesDir, GithubLink, readLink, recordDelivery, removeLink, writeLink } from './github-store';

export interface GithubDelivery {
  /** `X-GitHub-Event`. */
  event: string | undefined;
  /** `X-GitHub-Delivery`. */
  delivery: string | undefined;
  /** `X-Hub-Signature-256`. */
  signature: string | undefined;
  /** The body exactly as received (GitHub signs these bytes). */
  rawBody: string | undefined;
  payload: unknown;
}

export interface GithubDeliveryResult {
  delivery: string;
  event: string;
  /** started, woken, needs_input, stopped, pong, duplicate, ignored. */
  outcome: string;
  project_id?: string;
  task_id?: string;
  reason?: string;
}

const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;
const EVENT_NAME = /^[a-z_]{1,64}$/;

/**
 * The inbound GitHub adapter (docs/triggers.md): checks the delivery's signature with the
 * configured secret (HMAC-SHA256, `@octokit/webhooks-methods`), records its id durably (a
 * redelivery is answered `duplicate`), then acts on what decideGithubEvent says.
 */
@Injectable()
export class GithubInboundService {
  private readonly logger = new Logger('forge');
  private chain: Promise<unknown> = Promise.resolve();
  /** Delivery records are kept for a bounded window (prune.ts); GitHub redelivers for 3 days at most. */
  private readonly pruner = new RecordPruner();

  constructor(
    @Inject(TRIGGERS_OPTIONS) private readonly opts: TriggersOptions,
    @Optional() @Inject(FORGE_TASKS) private readonly tasks?: ForgeTasks,
  ) {}

  /** True when a `forge.github` section is configured (else the route answers 404). */
  get enabled(): boolean {
    return !!this.opts.forge?.github && !!this.tasks;
  }

  async receive(d: GithubDelivery): Promise<GithubDeliveryResult> {
    const cfg = this.opts.forge?.github;
    if (!cfg || !this.tasks) throw new TriggerError('NOT_FOUND', 'no GitHub forge is configured');
    // signature first: an unsigned caller learns nothing about the headers it got wrong
    if (!d.signature || d.rawBody === undefined || !(await verifySafe(cfg.webhook_secret, d.rawBody, d.signature))) {
      throw new TriggerError('UNAUTHORIZED', 'X-Hub-Signature-256 does not match the configured secret');
    }
    if (!d.delivery || !DELIVERY_ID.test(d.delivery)) throw new TriggerError('BAD_REQUEST', 'X-GitHub-Delivery header missing or malformed');
    if (!d.event || !EVENT_NAME.test(d.event)) throw new TriggerError('BAD_REQUEST', 'X-GitHub-Event header missing or malformed');
    const id = d.delivery;
    const event = d.event;
    // one delivery at a time: a redelivery racing its original is seen as a duplicate
    const op = () => this.handle(id, event, d.payload);
    const next = this.chain.then(op, op);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async handle(id: string, event: string, payload: unknown): Promise<GithubDeliveryResult> {
    const root = this.opts.root;
    if (deliverySeen(root, id)) return { delivery: id, event, outcome: 'duplicate' };
    const action = decideGithubEvent(this.opts.forge!.github!, event, payload);
    if (action.kind === 'ignore') return { delivery: id, event, outcome: 'ignored', reason: action.reason };
    if (action.kind === 'pong') return { delivery: id, event, outcome: 'pong' };
    this.pruner.maybePrune(githubDeliveriesDir(root));
    recordDelivery(root, id, event); // before acting: a redelivery never acts twice
    try {
      return { delivery: id, event, ...(await this.act(action)) };
    } catch (err) {
      forgetDelivery(root, id); // nothing was done: GitHub's redelivery may retry
      throw err;
    }
  }

  private async act(action: Exclude<GithubAction, { kind: 'ignore' | 'pong' }>): Promise<Omit<GithubDeliveryResult, 'delivery' | 'event'>> {
    const root = this.opts.root;
    const tasks = this.tasks!;
    if (action.kind === 'start') {
      const known = readLink(root, action.repository, action.number);
      if (known) return { outcome: 'ignored', reason: `issue already has task ${known.task_id}`, project_id: known.project_id, task_id: known.task_id };
      const t = action.rule.task;
      const now = new Date();
      const taskId = `task-${utcStamp(now)}-${slugOf(`gh-${action.number}`, randomSlug(4))}`;
      const link: GithubLink = { repository: action.repository, number: action.number, kind: 'issue', project_id: t.project_id, task_id: taskId, rule: action.rule.name, feedback_rounds: 0, state: 'claimed', title: action.vars.title.slice(0, 256), created_at: now.toISOString(), updated_at: now.toISOString() };
      writeLink(root, link); // claimed before the start: a second label event starts nothing
      try {
        const res = await tasks.start({ ...t, prompt: renderPrompt(t.prompt, action.vars), task_id: taskId, source: `github ${action.repository}#${action.number}` });
        writeLink(root, { ...link, state: 'started', updated_at: new Date().toISOString() });
        return { outcome: 'started', project_id: res.project_id, task_id: res.task_id };
      } catch (err) {
        removeLink(root, action.repository, action.number);
        throw err;
      }
    }
    if (action.kind === 'comment') {
      const link = readLink(root, action.repository, action.number);
      if (!link) return { outcome: 'ignored', reason: `${action.repository}#${action.number} has no task` };
      if (link.state === 'stopped') return { outcome: 'ignored', reason: `the task of ${action.repository}#${action.number} was stopped`, project_id: link.project_id, task_id: link.task_id };
      await tasks.wake(link.project_id, link.task_id, 'USER', action.body);
      return { outcome: 'woken', project_id: link.project_id, task_id: link.task_id };
    }
    if (action.kind === 'stop') {
      const link = readLink(root, action.repository, action.number);
      if (!link) return { outcome: 'ignored', reason: `${action.repository}#${action.number} has no task` };
      await tasks.stop(link.project_id, link.task_id, action.reason);
      writeLink(root, { ...link, state: 'stopped', updated_at: new Date().toISOString() });
      return { outcome: 'stopped', project_id: link.project_id, task_id: link.task_id };
    }
    return this.feedback(action);
  }

  /** A failed check or a change request: the task is woken with it, up to the retry cap, then needs_input. */
  private async feedback(action: Extract<GithubAction, { kind: 'feedback' }>): Promise<Omit<GithubDeliveryResult, 'delivery' | 'event'>> {
    const root = this.opts.root;
    const cap = this.opts.forge!.github!.max_feedback_rounds;
    // only pull requests the orchestrator opened (a `pull` link) route feedback
    const link = action.numbers.map((n) => readLink(root, action.repository, n)).find((l) => l?.kind === 'pull');
    if (!link) return { outcome: 'ignored', reason: `no pull request of ${action.repository} opened by the orchestrator` };
    const ref = { project_id: link.project_id, task_id: link.task_id };
    if (link.state === 'stopped') return { outcome: 'ignored', reason: 'the pull request was closed', ...ref };
    if (link.escalated_at) return { outcome: 'ignored', reason: 'the task already waits for input after the retry cap', ...ref };
    const newRound = link.last_round !== action.round;
    const rounds = link.feedback_rounds + (newRound ? 1 : 0);
    const now = new Date().toISOString();
    if (rounds > cap) {
      writeLink(root, { ...link, escalated_at: now, updated_at: now });
      await this.tasks!.needsInput(link.project_id, link.task_id, `The pull request got feedback ${rounds} times, over the retry cap of ${cap}; a person should look.\n\n${action.body}`);
      return { outcome: 'needs_input', ...ref };
    }
    writeLink(root, { ...link, feedback_rounds: rounds, last_round: action.round, updated_at: now });
    await this.tasks!.wake(link.project_id, link.task_id, 'FEEDBACK', action.body);
    return { outcome: 'woken', ...ref };
  }
}

async function verifySafe(secret: string, body: string, signature: string): Promise<boolean> {
  try {
    return await verify(secret, body, signature);
  } catch {
    return false; // malformed signature header
  }
}
