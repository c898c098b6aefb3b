import type { AppConfig, RunsLayout } from '@app/storage';
import { SESSION_ID_PATTERN } from '@app/agents';
import type { JobResult } from '../job';
import { taskRuns } from '../run-scan';
import { everyWithoutOverlap, sleep } from '../sleep';
import { WarnSink, WebhookSettings } from '@app/webhook';
import { enforceBudget } from './budget';
import { clearBudgetExceeded, clearRateLimited, isPaused, readRateLimited, writeRateLimited } from './markers';
import { effectiveSettings, hasSettings, TaskSettings, writeTaskSettings } from './task-settings';

export const DEFAULT_HOLD_POLL_MS = 1000;

/** The usage settings of a Ralph loop (TaskOptions carries them); given ones are stored in TASK-SETTINGS.yaml. */
export interface UsageLoopOptions {
  budget?: TaskSettings;
  /** Poll interval while paused or rate limited, and of the budget watch during an attempt. */
  holdPollMs?: number;
}

export interface UsageHookContext {
  /** The runs layout of the loop (handed down, not rebuilt from a root string). */
  layout: RunsLayout;
  projectId: string;
  taskId: string;
  config?: AppConfig;
  bus: WarnSink;
  post(type: string, body: string): Promise<void>;
  stopReason(): string | undefined;
  signal?: AbortSignal;
  webhook?: WebhookSettings;
  webhookBackoffMs?: number[];
  stopGraceMs?: number;
  onWebhook(delivery: Promise<boolean>): void;
}

export type UsageHold = { kind: 'none' } | { kind: 'rate_limited' } | { kind: 'stopped'; reason: string } | { kind: 'budget'; error: string };

/** The four small calls task.ts makes into usage accounting, budgets, rate limits, pause and session resume. */
export interface UsageHooks {
  /** Before an attempt: refuses an over-budget tree; waits while paused or a rate limit is pending (not counted). */
  gate(): Promise<UsageHold>;
  /** The session id the next attempt continues (resume_mode: continue), if any. */
  resumeSession(): string | undefined;
  /** The slot-queue place of the next attempt: after a rate-limit wait, the one its refused run was granted with (FIFO). */
  queueTicket(): number | undefined;
  /** Around an attempt: enforces the budget while the tree runs (returns the function that ends it). */
  watch(): () => void;
  /** After an attempt: budget check, then a rate-limit wait (`rate_limited`: do not count the attempt). */
  after(result: JobResult): Promise<UsageHold>;
}

export function usageHooks(opts: UsageLoopOptions, ctx: UsageHookContext): UsageHooks {
  const taskDir = ctx.layout.taskDir(ctx.projectId, ctx.taskId);
  if (opts.budget && hasSettings(opts.budget)) {
    writeTaskSettings(taskDir, opts.budget);
    // a budget given anew (e.g. raised on resume) is measured afresh
    const { max_tokens, max_cost_usd, max_wall_time_ms } = opts.budget;
    if (max_tokens || max_cost_usd || max_wall_time_ms) clearBudgetExceeded(taskDir);
  }
  const settings = effectiveSettings(taskDir, ctx.config);
  const pollMs = opts.holdPollMs ?? DEFAULT_HOLD_POLL_MS;
  let lastSession = latestSession(taskDir);
  let requeueAt: number | undefined;
  const enforce = () =>
    enforceBudget({
      layout: ctx.layout,
      projectId: ctx.projectId,
      taskId: ctx.taskId,
      budget: settings,
      bus: ctx.bus,
      webhook: ctx.webhook,
      webhookBackoffMs: ctx.webhookBackoffMs,
      stopGraceMs: ctx.stopGraceMs,
      onWebhook: ctx.onWebhook,
    });
  const interrupted = (): string | undefined => (ctx.signal?.aborted ? String(ctx.signal.reason ?? 'interrupted') : ctx.stopReason());

  const waitRateLimit = async (until: Date, runId: string): Promise<UsageHold> => {
    // measured on the monotonic clock from here (issue #31): a wall-clock jump neither ends the
    // wait early (forward) nor stretches it by the jump (backward). Read before anything is
    // written: a jump while the announcement below is being written must not move the end.
    const end = performance.now() + Math.max(0, until.getTime() - Date.now());
    writeRateLimited(taskDir, until, runId);
    await ctx.post('INFO', `rate limited until ${until.toISOString()}: waiting without counting a restart (run slot released)`);
    for (;;) {
      const reason = interrupted();
      if (reason) return { kind: 'stopped', reason };
      const left = end - performance.now();
      if (left <= 0) break;
      await sleep(Math.min(pollMs, left), ctx.signal);
    }
    clearRateLimited(taskDir);
    await ctx.post('INFO', 'rate limit reset; resuming the task');
    return { kind: 'rate_limited' };
  };

  return {
    async gate() {
      const over = await enforce();
      if (over) return { kind: 'budget', error: over };
      const pending = readRateLimited(taskDir);
      if (pending) {
        const held = await waitRateLimit(pending, '');
        if (held.kind === 'stopped') return held;
      }
      let announced = false;
      for (let scope = isPaused(taskDir); scope; scope = isPaused(taskDir)) {
        if (!announced) {
          announced = true;
          await ctx.post('INFO', `${scope === 'task' ? 'task' : 'project'} paused: holding the next attempt until unpaused`);
        }
        const reason = interrupted();
        if (reason) return { kind: 'stopped', reason };
        await sleep(pollMs, ctx.signal);
      }
      if (announced) await ctx.post('INFO', 'unpaused; resuming the task');
      return { kind: 'none' };
    },
    resumeSession: () => (settings.resume_mode === 'continue' ? lastSession : undefined),
    queueTicket() {
      const t = requeueAt;
      requeueAt = undefined;
      return t;
    },
    watch() {
      if (!settings.max_tokens && !settings.max_cost_usd && !settings.max_wall_time_ms) return () => undefined;
      return everyWithoutOverlap(enforce, pollMs);
    },
    async after(result) {
      const session = result.info?.session_id;
      if (session && SESSION_ID_PATTERN.test(session)) lastSession = session;
      const over = await enforce();
      if (over) return { kind: 'budget', error: over };
      const until = result.info?.resume_at;
      if (until && until.getTime() > Date.now()) {
        requeueAt = result.queueTicket;
        return waitRateLimit(until, result.runId);
      }
      return { kind: 'none' };
    },
  };
}

/** The session of the task's latest run that has one (by start time: run ids do not sort by name). */
function latestSession(taskDir: string): string | undefined {
  const runs = taskRuns(taskDir).sort((a, b) => a.info.start_time.getTime() - b.info.start_time.getTime());
  for (let i = runs.length - 1; i >= 0; i--) {
    const s = runs[i].info.session_id;
    if (s && SESSION_ID_PATTERN.test(s)) return s;
  }
  return undefined;
}
