import { createHmac } from 'node:crypto';
import { errorText } from './runner.errors';
import { parseDurationFlag } from './go-duration';
import { sleep } from './sleep';

export interface WebhookSettings {
  url?: string;
  events?: string[];
  secret?: string;
  timeout?: string | number;
}

export interface RunStopPayload {
  event: 'run_stop';
  project_id: string;
  task_id: string;
  run_id: string;
  agent_type: string;
  status: string;
  exit_code: number;
  started_at: string;
  stopped_at: string;
  duration_seconds: number;
  error_summary?: string;
}

/** Sent when a task enters needs_input (an open QUESTION/BLOCKED on its bus); signed like run_stop. */
export interface NeedsInputPayload {
  event: 'needs_input';
  project_id: string;
  task_id: string;
  run_id: string;
  question_id: string;
  question_type: string;
  question: string;
  asked_at: string;
  open_questions: number;
  ui_url?: string;
}

/** Any other event (e.g. budget_exceeded): the fields every payload carries. */
export interface WebhookEvent {
  event: string;
  project_id: string;
  task_id: string;
  run_id: string;
}

/** Minimal view of a bus writer, so tests and callers can pass a BusWriter. */
export interface WarnSink {
  append(msg: { type: string; project_id: string; task_id: string; run_id: string; body: string }): Promise<unknown>;
}

export interface DeliveryOptions {
  /** Sleeps before the 2nd and 3rd attempts (upstream: 1 s, 2 s). */
  backoffMs?: number[];
}

/**
 * Who delivers a job's run_stop and a loop's needs_input webhooks: WebhookService in both apps (injected as WEBHOOK_SENDER);
 * without one, deliverWebhook. `settings` is the job's `webhook:` config.
 */
export interface WebhookSender {
  wanted(settings: WebhookSettings | undefined, event?: string): boolean;
  deliver(settings: WebhookSettings | undefined, payload: RunStopPayload | NeedsInputPayload, bus?: WarnSink, opts?: DeliveryOptions): Promise<boolean>;
}

export const WEBHOOK_BACKOFF_MS = [1000, 2000];
const ATTEMPTS = 3;

export function webhookWanted(cfg: WebhookSettings | undefined, event = 'run_stop'): cfg is WebhookSettings {
  if (!cfg?.url) return false;
  return !cfg.events || cfg.events.length === 0 || cfg.events.includes(event);
}

export function webhookTimeoutMs(cfg: WebhookSettings): number {
  if (typeof cfg.timeout === 'number') return cfg.timeout;
  if (cfg.timeout) return parseDurationFlag(cfg.timeout, 'webhook timeout');
  return 10_000;
}

export function signBody(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * POSTs the run_stop (or needs_input) payload (3 attempts; backoff 1 s, 2 s; any 2xx is success). After the last
 * failure a WARN goes to the task bus. Resolves true when delivered.
 */
export async function deliverWebhook(
  cfg: WebhookSettings,
  payload: RunStopPayload | NeedsInputPayload | WebhookEvent,
  bus?: WarnSink,
  opts: DeliveryOptions = {},
): Promise<boolean> {
  if (!webhookWanted(cfg, payload.event)) return false;
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': 'conductor-loop/1.0' };
  if (cfg.secret) headers['X-Conductor-Signature'] = signBody(cfg.secret, body);
  const backoff = opts.backoffMs ?? WEBHOOK_BACKOFF_MS;
  const timeoutMs = webhookTimeoutMs(cfg);
  let lastError = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(backoff[attempt - 1] ?? 0);
    try {
      const res = await fetch(cfg.url!, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return true;
      lastError = `unexpected status ${res.status}`;
    } catch (err) {
      lastError = errorText(err);
    }
  }
  if (bus) {
    await bus
      .append({
        type: 'WARN',
        project_id: payload.project_id,
        task_id: payload.task_id,
        run_id: payload.run_id,
        body: `webhook delivery failed: webhook delivery failed after ${ATTEMPTS} attempts: ${lastError}`,
      })
      .catch(() => undefined);
  }
  return false;
}
