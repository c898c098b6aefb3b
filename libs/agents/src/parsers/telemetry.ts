import type { UsageTotals } from '@app/contracts';
import { isRecord, linesOf, parseJsonObject, StreamInput } from './lines';


/** What a run's stream says besides its text: usage, the CLI's own session id, a rate limit. */
export interface StreamTelemetry {
  usage?: UsageTotals;
  session_id?: string;
  /** The provider refused the run until this time (rate limit / usage cap). */
  rate_limited_until?: Date;
}

export const EMPTY_USAGE: UsageTotals = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Default wait when a CLI says "rate limited" without a reset time. */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;

// Texts codex and gemini print when the provider answers 429 / quota exhausted.
const RATE_LIMIT_TEXT = /\b429\b|rate[ _-]?limit|too many requests|usage limit|resource[_ ]exhausted|quota exceeded/i;
const RETRY_IN = /(?:try again|retry|retrying|reset[s]?)\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec(?:ond)?s?|m|min(?:ute)?s?|h|hours?)\b/i;

/** A reset time from an error text ("try again in 20s", "retry after 2 minutes"), else the default wait. */
export function resetFromText(text: string, now: Date = new Date()): Date {
  const m = RETRY_IN.exec(text);
  if (!m) return new Date(now.getTime() + DEFAULT_RATE_LIMIT_WAIT_MS);
  const n = Number(m[1]);
  const unit = m[2].toLowerCase();
  const ms = unit.startsWith('ms') || unit.startsWith('milli') ? n : unit.startsWith('h') ? n * 3600_000 : unit.startsWith('m') ? n * 60_000 : n * 1000;
  return new Date(now.getTime() + ms);
}

function add(a: UsageTotals | undefined, b: UsageTotals): UsageTotals {
  if (!a) return { ...b };
  const out: UsageTotals = {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
  };
  if (a.cost_usd !== undefined || b.cost_usd !== undefined) out.cost_usd = (a.cost_usd ?? 0) + (b.cost_usd ?? 0);
  return out;
}

/**
 * claude stream-json: the `result` event carries the run's total `usage` and `total_cost_usd`
 * (per-message `usage` on assistant events is only counted when no result arrives); `session_id`
 * is on every event; `rate_limit_event` with `rate_limit_info.status: "rejected"` and `resetsAt`
 * (epoch seconds) means the account is capped until then.
 */
export function parseClaudeTelemetry(input: StreamInput): StreamTelemetry {
  const out: StreamTelemetry = {};
  let result: UsageTotals | undefined;
  let messages: UsageTotals | undefined;
  const seen = new Set<string>();
  for (const line of linesOf(input)) {
    if (!line.includes('"session_id"') && !line.includes('"usage"') && !line.includes('rate_limit')) continue;
    const e = parseJsonObject(line);
    if (!e) continue;
    out.session_id ??= str(e.session_id);
    if (e.type === 'result' && isRecord(e.usage)) {
      const u = e.usage;
      result = add(result, {
        input_tokens: num(u.input_tokens),
        output_tokens: num(u.output_tokens),
        cache_read_tokens: num(u.cache_read_input_tokens),
        cache_write_tokens: num(u.cache_creation_input_tokens),
        ...(typeof e.total_cost_usd === 'number' ? { cost_usd: num(e.total_cost_usd) } : {}),
      });
    } else if (e.type === 'assistant' && isRecord(e.message) && isRecord(e.message.usage)) {
      // one API message is streamed as several events with the same id and usage
      const id = str(e.message.id);
      if (id && seen.has(id)) continue;
      if (id) seen.add(id);
      const u = e.message.usage;
      messages = add(messages, {
        input_tokens: num(u.input_tokens),
        output_tokens: num(u.output_tokens),
        cache_read_tokens: num(u.cache_read_input_tokens),
        cache_write_tokens: num(u.cache_creation_input_tokens),
      });
    } else if (e.type === 'rate_limit_event' && isRecord(e.rate_limit_info)) {
      const info = e.rate_limit_info;
      if (info.status === 'rejected') {
        const reset = num(info.resetsAt);
        out.rate_limited_until = reset > 0 ? new Date(reset * 1000) : new Date(Date.now() + DEFAULT_RATE_LIMIT_WAIT_MS);
      }
    }
  }
  out.usage = result ?? messages;
  return out;
}

/** codex exec --json: `thread.started.thread_id`; usage summed over `turn.completed.usage`; 429 texts in `turn.failed`/`error`. */
export function parseCodexTelemetry(input: StreamInput): StreamTelemetry {
  const out: StreamTelemetry = {};
  for (const line of linesOf(input)) {
    const e = parseJsonObject(line);
    if (!e) continue;
    if (e.type === 'thread.started') out.session_id ??= str(e.thread_id);
    else if (e.type === 'turn.completed' && isRecord(e.usage)) {
      const u = e.usage;
      out.usage = add(out.usage, {
        input_tokens: num(u.input_tokens),
        output_tokens: num(u.output_tokens),
        cache_read_tokens: num(u.cached_input_tokens),
        cache_write_tokens: num(u.cache_write_input_tokens),
      });
    } else if (e.type === 'turn.failed' || e.type === 'error') {
      const text = str(e.message) ?? (isRecord(e.error) ? str(e.error.message) : undefined) ?? '';
      if (RATE_LIMIT_TEXT.test(text)) out.rate_limited_until = resetFromText(text);
    }
  }
  return out;
}

/** gemini stream-json: `init.session_id`; usage from `result.stats`; a 429/quota error in `result.error`. */
export function parseGeminiTelemetry(input: StreamInput): StreamTelemetry {
  const out: StreamTelemetry = {};
  for (const line of linesOf(input)) {
    const e = parseJsonObject(line);
    if (!e) continue;
    if (e.type === 'init') out.session_id ??= str(e.session_id);
    else if (e.type === 'result') {
      if (isRecord(e.stats)) {
        const s = e.stats;
        out.usage = add(out.usage, {
          input_tokens: num(s.input_tokens ?? s.input),
          output_tokens: num(s.output_tokens),
          cache_read_tokens: num(s.cached),
          cache_write_tokens: 0,
        });
      }
      const text = isRecord(e.error) ? str(e.error.message) ?? '' : '';
      if (e.status === 'error' && RATE_LIMIT_TEXT.test(text)) out.rate_limited_until = resetFromText(text);
    }
  }
  return out;
}

/** Telemetry of a run's stdout by agent type; REST and command agents report none here. */
export function parseStreamTelemetry(agentType: string, input: StreamInput): StreamTelemetry {
  if (agentType === 'claude') return parseClaudeTelemetry(input);
  if (agentType === 'codex') return parseCodexTelemetry(input);
  if (agentType === 'gemini') return parseGeminiTelemetry(input);
  return {};
}

/** CLI text on stderr (codex/gemini print their 429 errors there): a rate limit with its reset. */
export function rateLimitFromText(text: string, now: Date = new Date()): Date | undefined {
  const line = text.split('\n').find((l) => RATE_LIMIT_TEXT.test(l));
  return line === undefined ? undefined : resetFromText(line, now);
}
