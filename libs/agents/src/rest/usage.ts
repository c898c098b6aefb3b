import type { UsageTotals } from '@app/contracts';
import { isRecord } from '../parsers/lines';

/** xAI reports cost in ticks: 1 USD = 10^10 ticks. */
const XAI_TICKS_PER_USD = 1e10;

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
const money = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/**
 * The OpenAI-compatible `usage` object of a chat-completion response or stream chunk:
 * `prompt_tokens` (input; includes cached), `completion_tokens` (output),
 * `prompt_tokens_details.cached_tokens` (cache reads); cost from Perplexity's `cost.total_cost`
 * (USD) or xAI's `cost_in_usd_ticks`. Undefined when the object carries no usage.
 */
export function restUsage(body: unknown): UsageTotals | undefined {
  if (!isRecord(body) || !isRecord(body.usage)) return undefined;
  const u = body.usage;
  if (u.prompt_tokens === undefined && u.completion_tokens === undefined) return undefined;
  const out: UsageTotals = {
    input_tokens: count(u.prompt_tokens),
    output_tokens: count(u.completion_tokens),
    cache_read_tokens: isRecord(u.prompt_tokens_details) ? count(u.prompt_tokens_details.cached_tokens) : 0,
    cache_write_tokens: 0,
  };
  const cost = isRecord(u.cost) ? money(u.cost.total_cost) : money(u.cost);
  const ticks = money(u.cost_in_usd_ticks);
  if (cost !== undefined) out.cost_usd = cost;
  else if (ticks !== undefined) out.cost_usd = ticks / XAI_TICKS_PER_USD;
  return out;
}

const PARTIAL_USAGE = Symbol('partialUsage');

/**
 * The error that cut a REST run off, carrying the usage its stream had reported by then (a
 * budget counts what was spent even when the answer never completed). Returns `err` itself.
 */
export function withPartialUsage<E>(err: E, usage: UsageTotals | undefined): E {
  if (usage && typeof err === 'object' && err !== null) Object.defineProperty(err, PARTIAL_USAGE, { value: usage, configurable: true });
  return err;
}

/** The usage a cut-off REST run had received (marked `partial`), if its error carries any. */
export function partialUsageOf(err: unknown): UsageTotals | undefined {
  const usage = typeof err === 'object' && err !== null ? (err as { [PARTIAL_USAGE]?: UsageTotals })[PARTIAL_USAGE] : undefined;
  return usage ? { ...usage, partial: true } : undefined;
}
