import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentError, RateLimitedError, rateLimitResetAt, RestBackendOptions, RestRunContext, restUsage, runPerplexity, runXai } from '@app/agents';
import { reply, scriptedServer, ScriptedServer, sseEvent, sseReply } from '../../utils/scripted-http';

// Usage objects in the providers' documented shapes: Perplexity repeats the running usage with a
// `cost` breakdown in USD; xAI sends it on the last chunk (stream_options.include_usage) with the
// cost in ticks (1 USD = 1e10 ticks); both are OpenAI-compatible (prompt/completion tokens).
const pplxUsage = (prompt: number, completion: number, total_cost: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  search_context_size: 'low',
  cost: { input_tokens_cost: 0.00001, output_tokens_cost: 0.00002, request_cost: 0.005, total_cost },
});
const delta = (content: string, extra: Record<string, unknown> = {}) => sseEvent({ choices: [{ index: 0, delta: { content } }], ...extra });

describe('REST agents report the response usage', () => {
  let dir: string;
  let server: ScriptedServer | undefined;
  let delays: number[];
  let opts: RestBackendOptions;
  const ctx = (env: Record<string, string>): RestRunContext => ({ prompt: 'q', env, stdoutPath: join(dir, 'out.txt'), stderrPath: join(dir, 'err.txt') });
  const serve = async (...handlers: Parameters<typeof scriptedServer>[0]) => (server = await scriptedServer(handlers));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rest-usage-'));
    delays = [];
    opts = { sleep: async (ms) => void delays.push(ms) };
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('perplexity: the last chunk\'s usage and cost.total_cost', async () => {
    const s = await serve(sseReply(delta('A', { usage: pplxUsage(12, 1, 0.005012) }) + delta('B', { usage: pplxUsage(12, 2, 0.005014) }) + 'data: [DONE]\n\n'));
    const result = await runPerplexity(ctx({ PERPLEXITY_API_KEY: 'k' }), { base_url: s.url }, opts);
    expect(result).toEqual({ usage: { input_tokens: 12, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.005014 } });
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('AB');
  });

  it('perplexity without usage in the stream reports none', async () => {
    const s = await serve(sseReply(delta('plain') + 'data: [DONE]\n\n'));
    expect(await runPerplexity(ctx({ PERPLEXITY_API_KEY: 'k' }), { base_url: s.url }, opts)).toEqual({});
  });

  it('xai stream: asks for usage and reads the final usage chunk (cached tokens, cost ticks)', async () => {
    const usage = { prompt_tokens: 200, completion_tokens: 30, total_tokens: 230, prompt_tokens_details: { cached_tokens: 150 }, cost_in_usd_ticks: 37756000 };
    const s = await serve(sseReply(delta('Hi') + sseEvent({ choices: [], usage }) + 'data: [DONE]\n\n'));
    const result = await runXai(ctx({ XAI_API_KEY: 'k' }), { base_url: s.url }, opts);
    expect(JSON.parse(s.requests[0].body).stream_options).toEqual({ include_usage: true });
    expect(result.usage).toEqual({ input_tokens: 200, output_tokens: 30, cache_read_tokens: 150, cache_write_tokens: 0, cost_usd: 0.0037756 });
  });

  it('xai single JSON answer: its usage without a cost', async () => {
    const s = await serve(reply(200, JSON.stringify({ choices: [{ message: { content: 'one' } }], usage: { prompt_tokens: 5, completion_tokens: 1 } })));
    expect((await runXai(ctx({ XAI_API_KEY: 'k' }), { base_url: s.url }, opts)).usage).toEqual({ input_tokens: 5, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 });
  });

  it('restUsage ignores objects without token counts and bad numbers', () => {
    expect(restUsage({ choices: [] })).toBeUndefined();
    expect(restUsage({ usage: { total_tokens: 4 } })).toBeUndefined();
    expect(restUsage({ usage: { prompt_tokens: -3, completion_tokens: 'x', cost: -1 } })).toEqual({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 });
    expect(restUsage({ usage: { prompt_tokens: 1, completion_tokens: 2, cost: 0.5 } })?.cost_usd).toBe(0.5);
  });
});

describe('HTTP 429 from a REST agent', () => {
  let dir: string;
  let server: ScriptedServer | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'rest-429-'))));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  const ctx = (env: Record<string, string>): RestRunContext => ({ prompt: 'q', env, stdoutPath: join(dir, 'out.txt'), stderrPath: join(dir, 'err.txt') });

  it('with a Retry-After HTTP date: RATE_LIMITED until that date, after one request', async () => {
    const at = new Date(Math.ceil((Date.now() + 120_000) / 1000) * 1000);
    server = await scriptedServer([reply(429, '{"error":"slow"}', { 'retry-after': at.toUTCString() })]);
    const err = await runXai(ctx({ XAI_API_KEY: 'k' }), { base_url: server.url }, { sleep: async () => undefined }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).resumeAt.toISOString()).toBe(at.toISOString());
    expect((err as AgentError).code).toBe('RATE_LIMITED');
    expect(server.requests).toHaveLength(1);
  });

  it('without Retry-After: retried in the run; still refused after the last retry → RATE_LIMITED with the default minute', async () => {
    server = await scriptedServer([reply(429, 'busy')]);
    const delays: number[] = [];
    const before = Date.now();
    const err = (await runPerplexity(ctx({ PERPLEXITY_API_KEY: 'k' }), { base_url: server.url }, { sleep: async (ms) => void delays.push(ms) }).catch((e: unknown) => e)) as RateLimitedError;
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(delays).toEqual([1000, 2000, 4000]);
    expect(server.requests).toHaveLength(4);
    expect(err.resumeAt.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    expect(err.resumeAt.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it('rateLimitResetAt: seconds or an HTTP date, at most a day ahead, nothing for 0/past/garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(rateLimitResetAt('7', now)?.toISOString()).toBe('2026-01-01T00:00:07.000Z');
    expect(rateLimitResetAt('Thu, 01 Jan 2026 01:00:00 GMT', now)?.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(rateLimitResetAt(String(7 * 24 * 3600), now)?.toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(rateLimitResetAt('0', now)).toBeUndefined();
    expect(rateLimitResetAt('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBeUndefined();
    expect(rateLimitResetAt('later', now)).toBeUndefined();
    expect(rateLimitResetAt(null, now)).toBeUndefined();
  });
});
