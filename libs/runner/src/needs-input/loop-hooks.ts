import { BusWriter } from '@app/messagebus';
import type { RunsLayout } from '@app/storage';
import { WebhookSender, WebhookSettings } from '@app/webhook';
import { readInputContext } from './context';
import { awaitInput, InputGateOptions, InputGateResult, watchQuestions } from './input-gate';
import { watchStall } from './stall';

/** The needs-input settings of a Ralph loop (TaskOptions carries them). */
export interface NeedsInputLoopOptions {
  /** Wall time a loop waits for an answer to an open question (default 24h); then the task fails. */
  inputWaitMs?: number;
  inputPollMs?: number;
  /** Flag a run stalled after this long without output or bus activity (0/undefined: off). */
  stallAfterMs?: number;
  /** Terminate a stalled run (the loop restarts it like a failed attempt). */
  killOnStall?: boolean;
}

export interface LoopHookContext {
  /** The runs layout of the loop (handed down, not rebuilt from a root string). */
  layout: RunsLayout;
  projectId: string;
  taskId: string;
  bus: BusWriter;
  conductorUrl?: string;
  webhook?: WebhookSettings;
  webhookBackoffMs?: number[];
  webhookSender?: WebhookSender;
  signal?: AbortSignal;
  post(type: string, body: string): Promise<void>;
  stopReason(): string | undefined;
  onWebhook(delivery: Promise<boolean>): void;
}

/** The three small calls task.ts makes into the needs-input mechanism. */
export interface LoopHooks {
  /** Before an attempt: waits while a question is open (the attempt is neither started nor counted). */
  gate(): Promise<InputGateResult>;
  /** The prompt of the next attempt: answers and waking messages since the last attempt, then the task. */
  promptFor(prompt: string): string;
  /** Around an attempt: stall detection and the needs_input webhook of a question asked mid-run (returns the function that ends both). */
  watch(): () => void;
}

export function needsInputHooks(opts: NeedsInputLoopOptions, ctx: LoopHookContext): LoopHooks {
  const { layout } = ctx;
  const taskDir = layout.taskDir(ctx.projectId, ctx.taskId);
  const busPath = layout.taskBus(ctx.projectId, ctx.taskId);
  // one set for the loop: a question announced during a run is not announced again at the gate
  const notified = new Set<string>();
  const gateOptions: InputGateOptions = {
    taskDir,
    busPath,
    projectId: ctx.projectId,
    taskId: ctx.taskId,
    waitBudgetMs: opts.inputWaitMs,
    pollMs: opts.inputPollMs,
    signal: ctx.signal,
    conductorUrl: ctx.conductorUrl,
    webhook: ctx.webhook,
    webhookBackoffMs: ctx.webhookBackoffMs,
    webhookSender: ctx.webhookSender,
    bus: ctx.bus,
    post: ctx.post,
    stopReason: ctx.stopReason,
    onWebhook: ctx.onWebhook,
    notified,
  };
  return {
    gate: () => awaitInput(gateOptions),
    promptFor: (prompt) => readInputContext(busPath) + prompt,
    watch: () => {
      const unwatchQuestions = watchQuestions(gateOptions);
      if (!opts.stallAfterMs || opts.stallAfterMs <= 0) return unwatchQuestions;
      const unwatchStall = watchStall({
        runsDir: layout.runsDir(ctx.projectId, ctx.taskId),
        busPath,
        stallAfterMs: opts.stallAfterMs,
        kill: opts.killOnStall,
        post: async (type, body, meta, runId) => {
          await ctx.bus.append({ type, project_id: ctx.projectId, task_id: ctx.taskId, run_id: runId, meta, body });
        },
      });
      return () => {
        unwatchQuestions();
        unwatchStall();
      };
    },
  };
}
