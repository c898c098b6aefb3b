import { createHmac, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDurationOrSeconds, standardWebhooksKey } from '@app/storage';

export interface WebhookSettings {
  url?: string;
  events?: string[];
  secret?: string;
  /** Standard Webhooks signing secret, `whsec_<base64 of 24–64 bytes>`: adds `webhook-signature`. */
  standard_webhooks_secret?: string;
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

/** Injection token of the WebhookSender the runner hands to every job and loop (WebhookModule provides it). */
export const WEBHOOK_SENDER = Symbol('WEBHOOK_SENDER');

export const WEBHOOK_BACKOFF_MS = [1000, 2000];
const ATTEMPTS = 3;

export function webhookWanted(cfg: WebhookSettings | undefined, event = 'run_stop'): cfg is WebhookSettings {
  if (!cfg?.url) return false;
  return !cfg.events || cfg.events.length === 0 || cfg.events.includes(event);
}

export function webhookTimeoutMs(cfg: WebhookSettings): number {
  if (typeof cfg.timeout === 'number') return cfg.timeout;
  if (cfg.timeout) {
    const ms = parseDurationOrSeconds(cfg.timeout);
    if (ms === undefined) throw new Error(`invalid webhook timeout "${cfg.timeout}": use a Go duration such as 30s, 1m30s or 500ms`);
    return ms;
  }
  return 10_000;
}

export function signBody(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` (Standard Webhooks, symmetric signature). */
export function standardWebhooksSignature(key: Buffer, id: string, timestamp: number, body: string): string {
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** A delivery that failed for good (after its attempts, or at once on a redirect). */
export interface WebhookFailure {
  event: string;
  project_id: string;
  task_id: string;
  run_id: string;
  /** The `webhook-id` every attempt of this delivery carried. */
  delivery_id: string;
  /** The receiver's origin (scheme, host, port: path and query may hold tokens). */
  receiver: string;
  attempts: number;
  error: string;
}

const failureListeners = new Set<(failure: WebhookFailure) => void>();

/** Calls `listener` for every webhook delivery of this process that fails (the server logs them). Returns the unsubscribe. */
export function observeWebhookFailures(listener: (failure: WebhookFailure) => void): () => void {
  failureListeners.add(listener);
  return () => failureListeners.delete(listener);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid URL';
  }
}

/**
 * POSTs the run_stop (or needs_input) payload (3 attempts; backoff 1 s, 2 s; any 2xx is success). Every
 * attempt carries the same `webhook-id` and its own `webhook-timestamp` (Standard Webhooks), signed
 * with `webhook-signature` when `standard_webhooks_secret` is set and with `X-Conductor-Signature`
 * when `secret` is. Redirects are not followed: a 3xx fails the delivery at once (the signed body
 * goes nowhere else). After the final failure a WARN goes to the task bus. Resolves true when delivered.
 */
export async function deliverWebhook(
  cfg: WebhookSettings,
  payload: RunStopPayload | NeedsInputPayload | WebhookEvent,
  bus?: WarnSink,
  opts: DeliveryOptions = {},
): Promise<boolean> {
  if (!webhookWanted(cfg, payload.event)) return false;
  const body = JSON.stringify(payload);
  const deliveryId = `msg_${randomUUID().replace(/-/g, '')}`;
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': 'conductor-loop/1.0', 'webhook-id': deliveryId };
  if (cfg.secret) headers['X-Conductor-Signature'] = signBody(cfg.secret, body);
  const standardKey = cfg.standard_webhooks_secret ? standardWebhooksKey(cfg.standard_webhooks_secret) : undefined;
  const backoff = opts.backoffMs ?? WEBHOOK_BACKOFF_MS;
  const timeoutMs = webhookTimeoutMs(cfg);
  let lastError = '';
  let attempts = 0;
  while (attempts < ATTEMPTS) {
    if (attempts > 0) await sleep(backoff[attempts - 1] ?? 0);
    attempts++;
    const timestamp = Math.floor(Date.now() / 1000);
    headers['webhook-timestamp'] = String(timestamp);
    if (standardKey) headers['webhook-signature'] = standardWebhooksSignature(standardKey, deliveryId, timestamp, body);
    try {
      const res = await fetch(cfg.url!, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return true;
      if (res.status >= 300 && res.status < 400) {
        lastError = `redirect (status ${res.status}) not followed`;
        break; // the same URL redirects again: no retry
      }
      lastError = `unexpected status ${res.status}`;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
  }
  const failure: WebhookFailure = {
    event: payload.event,
    project_id: payload.project_id,
    task_id: payload.task_id,
    run_id: payload.run_id,
    delivery_id: deliveryId,
    receiver: originOf(cfg.url!),
    attempts,
    error: lastError,
  };
  for (const listener of failureListeners) {
    try {
      listener(failure);
    } catch {
      // an observer's failure is not the delivery's
    }
  }
  if (bus) {
    await bus
      .append({
        type: 'WARN',
        project_id: payload.project_id,
        task_id: payload.task_id,
        run_id: payload.run_id,
        body: `webhook delivery failed: webhook delivery failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${lastError}`,
      })
      .catch(() => undefined);
  }
  return false;
}
