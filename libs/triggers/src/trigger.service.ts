import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { randomSlug, utcStamp, validateTriggerName } from '@app/storage';
import { slugOf } from './scheduler.service';
import { RecordPruner } from './prune';
import { idempotencyDir, readIdempotency, readTokenHash, removeIdempotency, sha256Hex, writeIdempotency } from './state';
import { renderPrompt } from './template';
import { TASK_STARTER, TaskStarter, TriggerError } from './task-starter';
import { TRIGGERS_OPTIONS, TriggersOptions } from './triggers.options';

export interface TriggerCall {
  name: string;
  /** The bearer token presented (undefined: none). */
  token: string | undefined;
  payload: unknown;
  /** `Idempotency-Key` header, when sent. */
  idempotencyKey?: string;
  httpRequest?: unknown;
}

export interface TriggerResult {
  trigger: string;
  project_id: string;
  task_id: string;
  run_id?: string;
  status: string;
  /** True when the idempotency key was seen before: no new task was started. */
  replayed: boolean;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

function hashMatches(token: string, expectedHex: string): boolean {
  const a = Buffer.from(sha256Hex(token), 'hex');
  const b = Buffer.from(expectedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * HTTP triggers (docs/triggers.md): the trigger's own bearer token (stored as its sha256, checked in
 * constant time), a per-trigger rate limit, the payload rendered into the prompt template, and an
 * optional idempotency key whose durable record (written before the start) makes a repeat return
 * the same task instead of starting another.
 */
@Injectable()
export class TriggerService {
  /** Per trigger: start times of the requests in the last minute. */
  private readonly recent = new Map<string, number[]>();
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Idempotency records are kept for a bounded window (prune.ts), not forever. */
  private readonly pruner = new RecordPruner();

  constructor(
    @Inject(TRIGGERS_OPTIONS) private readonly opts: TriggersOptions,
    @Inject(TASK_STARTER) private readonly starter: TaskStarter,
  ) {}

  names(): string[] {
    return Object.keys(this.opts.triggers);
  }

  invoke(call: TriggerCall): Promise<TriggerResult> {
    // unknown trigger and wrong token answer alike: a caller without a token learns nothing
    const denied = new TriggerError('UNAUTHORIZED', 'valid trigger token required');
    let name: string;
    try {
      name = validateTriggerName(call.name, 'trigger name');
    } catch {
      return Promise.reject(denied);
    }
    const t = this.opts.triggers[name];
    const hashes = t ? [t.token_sha256, readTokenHash(this.opts.root, name)].filter((h): h is string => !!h) : [];
    if (call.token === undefined || hashes.length === 0 || !hashes.some((h) => hashMatches(call.token!, h))) return Promise.reject(denied);
    if (call.idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(call.idempotencyKey)) {
      return Promise.reject(new TriggerError('BAD_REQUEST', 'Idempotency-Key must be 1-200 printable ASCII characters'));
    }
    const size = Buffer.byteLength(JSON.stringify(call.payload ?? null));
    if (size > t.max_payload_bytes) return Promise.reject(new TriggerError('PAYLOAD_TOO_LARGE', `payload is ${size} bytes, over the trigger's ${t.max_payload_bytes}`));
    // one call per trigger at a time: two requests with one key never both start a task
    const prev = this.chains.get(name) ?? Promise.resolve();
    const op = () => this.run(name, call);
    const next = prev.then(op, op);
    this.chains.set(name, next.catch(() => undefined));
    return next;
  }

  private async run(name: string, call: TriggerCall): Promise<TriggerResult> {
    const t = this.opts.triggers[name];
    const key = call.idempotencyKey;
    if (key !== undefined) {
      const seen = readIdempotency(this.opts.root, name, key);
      if (seen) return { trigger: name, project_id: seen.project_id, task_id: seen.task_id, run_id: seen.run_id, status: seen.status, replayed: true };
    }
    this.takeRateSlot(name, t.rate_per_minute);
    const now = new Date();
    const taskId = `task-${utcStamp(now)}-${slugOf(name, randomSlug(4))}`;
    const rec = { key: key ?? '', project_id: t.task.project_id, task_id: taskId, status: 'claimed', created_at: now.toISOString() };
    if (key !== undefined) {
      this.pruner.maybePrune(idempotencyDir(this.opts.root, name));
      writeIdempotency(this.opts.root, name, rec); // claimed before the start (at most once)
    }
    let res;
    try {
      res = await this.starter.start({ ...t.task, prompt: renderPrompt(t.task.prompt, call.payload), task_id: taskId, source: `trigger ${name}`, httpRequest: call.httpRequest });
    } catch (err) {
      if (key !== undefined) removeIdempotency(this.opts.root, name, key); // refused: nothing started, the key is free again
      throw err;
    }
    if (key !== undefined) writeIdempotency(this.opts.root, name, { ...rec, run_id: res.run_id, status: res.status });
    return { trigger: name, project_id: res.project_id, task_id: res.task_id, run_id: res.run_id, status: res.status, replayed: false };
  }

  private takeRateSlot(name: string, perMinute: number): void {
    const now = Date.now();
    const times = (this.recent.get(name) ?? []).filter((at) => now - at < 60_000);
    if (times.length >= perMinute) {
      this.recent.set(name, times);
      throw new TriggerError('TOO_MANY_REQUESTS', `trigger ${name} accepts ${perMinute} requests a minute`, Math.max(1, Math.ceil((60_000 - (now - times[0])) / 1000)));
    }
    times.push(now);
    this.recent.set(name, times);
  }
}
