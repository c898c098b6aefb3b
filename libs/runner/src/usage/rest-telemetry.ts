import { RateLimitedError, RestRunResult, StreamTelemetry } from '@app/agents';

/**
 * The telemetry of a REST run (perplexity, xai): the provider's `usage` from the response, or,
 * when the request was refused with 429, the reset time (`resume_at`). CLI agents get theirs from
 * their stdout stream instead (readRunTelemetry).
 */
export function restTelemetry(result: RestRunResult | undefined, err?: unknown): StreamTelemetry {
  const out: StreamTelemetry = {};
  if (result?.usage) out.usage = result.usage;
  if (err instanceof RateLimitedError) out.rate_limited_until = err.resumeAt;
  return out;
}
