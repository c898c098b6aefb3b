import { partialUsageOf, RateLimitedError, RestRunResult, StreamTelemetry } from '@app/agents';

/**
 * The telemetry of a REST run (perplexity, xai): the provider's `usage` from the response, or,
 * when the request was refused with 429, the reset time (`resume_at`); a run cut off mid-stream
 * keeps what its chunks had reported (`usage.partial`). CLI agents get theirs from
 * their stdout stream instead (readRunTelemetry).
 */
export function restTelemetry(result: RestRunResult | undefined, err?: unknown): StreamTelemetry {
  const out: StreamTelemetry = {};
  const usage = result?.usage ?? partialUsageOf(err);
  if (usage) out.usage = usage;
  if (err instanceof RateLimitedError) out.rate_limited_until = err.resumeAt;
  return out;
}
