import { statSync } from 'node:fs';
import { isTaskDone } from '@app/storage';
import { formatGoDuration } from '../go-duration';
import { everyWithoutOverlap, sleep } from '../sleep';
import { deliverWebhook, NeedsInputPayload, WebhookSender, WebhookSettings, webhookWanted, WarnSink } from '@app/webhook';
import { OpenQuestion, readOpenQuestions, syncNeedsInputFile } from './questions';

export const DEFAULT_INPUT_WAIT_MS = 24 * 3600_000;
export const DEFAULT_INPUT_POLL_MS = 500;

export interface InputGateOptions {
  taskDir: string;
  busPath: string;
  projectId: string;
  taskId: string;
  /** Wall time to wait for an answer before the task fails (default 24h). */
  waitBudgetMs?: number;
  pollMs?: number;
  signal?: AbortSignal;
  conductorUrl?: string;
  webhook?: WebhookSettings;
  webhookBackoffMs?: number[];
  /** The injected WebhookService (RunnerService); default: deliverWebhook. */
  webhookSender?: WebhookSender;
  bus: WarnSink;
  post(type: string, body: string): Promise<void>;
  /** A reason to stop waiting (stop or cancel requested), checked at each poll. */
  stopReason(): string | undefined;
  /** Collects the needs_input webhook delivery, so the loop can await it before it ends. */
  onWebhook?(delivery: Promise<boolean>): void;
  /**
   * Questions the webhook has been sent for (the loop keeps one set across its attempts, so a
   * question seen during a run and again at the gate is announced once). Default: a new set.
   */
  notified?: Set<string>;
}

export type InputGateResult = { kind: 'none' } | { kind: 'answered' } | { kind: 'stopped'; reason: string } | { kind: 'timeout'; error: string };

/** UI link of a task (the dashboard at /ui/ reads `?project=&task=`). */
export function taskUiLink(conductorUrl: string | undefined, projectId: string, taskId: string): string | undefined {
  if (!conductorUrl) return undefined;
  return `${conductorUrl.replace(/\/+$/, '')}/ui/?project=${encodeURIComponent(projectId)}&task=${encodeURIComponent(taskId)}`;
}

function wantsNotice(opts: InputGateOptions): boolean {
  const sender = opts.webhookSender;
  return sender ? sender.wanted(opts.webhook, 'needs_input') : webhookWanted(opts.webhook, 'needs_input');
}

/**
 * The one place the `needs_input` webhook is sent from: once per open question (the latest one not
 * announced yet names the payload; `open_questions` counts them all).
 */
function notify(opts: InputGateOptions, open: OpenQuestion[]): void {
  const notified = opts.notified ?? new Set<string>();
  const fresh = open.filter((q) => !notified.has(q.msg_id));
  if (fresh.length === 0) return;
  for (const q of open) notified.add(q.msg_id);
  const sender = opts.webhookSender;
  if (!wantsNotice(opts)) return;
  const q = fresh[fresh.length - 1];
  const payload: NeedsInputPayload = {
    event: 'needs_input',
    project_id: opts.projectId,
    task_id: opts.taskId,
    run_id: q.run_id,
    question_id: q.msg_id,
    question_type: q.type,
    question: q.body,
    asked_at: q.ts.toISOString(),
    open_questions: open.length,
    ui_url: taskUiLink(opts.conductorUrl, opts.projectId, opts.taskId),
  };
  const delivery = { backoffMs: opts.webhookBackoffMs };
  opts.onWebhook?.(sender ? sender.deliver(opts.webhook, payload, opts.bus, delivery) : deliverWebhook(opts.webhook!, payload, opts.bus, delivery));
}

/**
 * While an attempt runs: an agent that asks and keeps running (`run-agent ask --wait`) never
 * reaches the gate, so the task bus is watched (re-read only when it changed) and a new open
 * question is announced at once through the same notify as the gate. Returns the stop function.
 */
export function watchQuestions(opts: InputGateOptions): () => void {
  if (!wantsNotice(opts)) return () => undefined;
  let seen = '';
  const tick = async (): Promise<void> => {
    let stamp: string;
    try {
      const st = statSync(opts.busPath);
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return;
    }
    if (stamp === seen) return;
    seen = stamp;
    const open = readOpenQuestions(opts.busPath);
    if (open.length > 0) notify(opts, open);
  };
  return everyWithoutOverlap(tick, opts.pollMs ?? DEFAULT_INPUT_POLL_MS, { unref: true });
}

/**
 * The Ralph loop's needs-input hook, called before each attempt: while the task bus has an open
 * question the loop does not start (nor count) an attempt; it marks the task needs_input (state
 * file + INFO + the `needs_input` webhook, unless the question was announced already), then polls until every question is answered, DONE
 * appears, a stop is requested or the wait budget is spent.
 */
export async function awaitInput(opts: InputGateOptions): Promise<InputGateResult> {
  let open = readOpenQuestions(opts.busPath);
  if (open.length === 0) {
    syncNeedsInputFile(opts.taskDir, open);
    return { kind: 'none' };
  }
  const budget = opts.waitBudgetMs ?? DEFAULT_INPUT_WAIT_MS;
  const pollMs = opts.pollMs ?? DEFAULT_INPUT_POLL_MS;
  const started = Date.now();
  syncNeedsInputFile(opts.taskDir, open);
  await opts.post('INFO', `task needs input: waiting for an answer to ${open.map((q) => q.msg_id).join(', ')} (not restarting)`);
  notify(opts, open);
  for (;;) {
    const reason = opts.signal?.aborted ? String(opts.signal.reason ?? 'interrupted') : opts.stopReason();
    if (reason) return { kind: 'stopped', reason };
    if (isTaskDone(opts.taskDir)) {
      syncNeedsInputFile(opts.taskDir, []);
      return { kind: 'none' };
    }
    open = readOpenQuestions(opts.busPath);
    if (open.length === 0) {
      syncNeedsInputFile(opts.taskDir, open);
      await opts.post('INFO', 'input received; resuming the task');
      return { kind: 'answered' };
    }
    const left = started + budget - Date.now();
    if (left <= 0) return { kind: 'timeout', error: `no answer within the input wait budget (${formatGoDuration(budget)})` };
    await sleep(Math.min(pollMs, left), opts.signal);
  }
}
