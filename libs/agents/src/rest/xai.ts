import { AgentError } from '../agents.errors';
import { RestAgentConfig, RestRunContext, RestRunResult } from '../agent.types';
import type { UsageTotals } from '@app/contracts';
import { isRecord } from '../parsers/lines';
import { lookupEnv, RunOutputFiles } from './output-files';
import { DEFAULT_IDLE_STREAM_TIMEOUT_MS, RestBackendOptions } from './rest-options';
import { canceledError, postWithRetry } from './retry';
import { SseIdleTimeoutError, sseDataEvents } from './sse';
import { restUsage, withPartialUsage } from './usage';

export const XAI_DEFAULT_BASE_URL = 'https://api.x.ai';
export const XAI_DEFAULT_MODEL = 'grok-4';

/**
 * Chat-completions endpoint from a base URL: a path ending in `/v1/chat/completions` is kept,
 * one ending in `/v1` gets `/chat/completions`, anything else gets `/v1/chat/completions`.
 */
export function xaiEndpoint(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl.trim() || XAI_DEFAULT_BASE_URL);
  } catch {
    throw new AgentError('INVALID_CONFIG', `xai parse base url: invalid URL "${baseUrl}"`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/v1/chat/completions')) return url.toString();
  url.pathname = path.endsWith('/v1') ? `${path}/chat/completions` : `${path}/v1/chat/completions`;
  return url.toString();
}

/**
 * Runs one xAI chat completion (runner-agents.md §4.5). Endpoint: env XAI_API_ENDPOINT /
 * XAI_BASE_URL / XAI_API_BASE, then config `base_url`, then api.x.ai. Streams (SSE) or a single
 * JSON answer are both accepted. The stream is asked for its usage (`stream_options.include_usage`,
 * an added field); resolves with the last `usage` seen (tokens and `cost_in_usd_ticks`).
 */
export async function runXai(ctx: RestRunContext, config: RestAgentConfig = {}, opts: RestBackendOptions = {}): Promise<RestRunResult> {
  const files = new RunOutputFiles(ctx.stdoutPath, ctx.stderrPath, ctx.echo);
  try {
    if (ctx.prompt.trim() === '') throw new AgentError('INVALID_CONFIG', 'prompt is empty');
    const key = config.token?.trim() || lookupEnv(ctx.env, 'XAI_API_KEY');
    if (!key) throw new AgentError('INVALID_CONFIG', 'xai api key is empty');
    const endpoint = xaiEndpoint(lookupEnv(ctx.env, 'XAI_API_ENDPOINT', 'XAI_BASE_URL', 'XAI_API_BASE') || config.base_url?.trim() || '');
    const model = lookupEnv(ctx.env, 'XAI_MODEL') || config.model?.trim() || XAI_DEFAULT_MODEL;

    const { response, controller } = await postWithRetry(
      {
        label: 'xai',
        url: endpoint,
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          Accept: 'text/event-stream',
          'User-Agent': 'conductor-loop/xai',
        },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: ctx.prompt }], stream: true, stream_options: { include_usage: true } }),
        signal: ctx.signal,
        log: (line) => files.stderr(line),
        formatStatusError: (status, body) => `xai request failed: status ${status}: ${body}`,
      },
      opts,
    );

    const contentType = response.headers.get('content-type') ?? '';
    if (!contentType.toLowerCase().includes('text/event-stream')) {
      const single = await singleResponse(response);
      files.stdout(single.content);
      return single.usage ? { usage: single.usage } : {};
    }
    if (!response.body) throw new AgentError('STREAM', 'xai response has no body');
    let usage: UsageTotals | undefined;
    try {
      for await (const payload of sseDataEvents(response.body, { idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_STREAM_TIMEOUT_MS, controller })) {
        if (payload === '[DONE]') break;
        if (payload === '') continue;
        const chunk = parseChunk(payload);
        usage = restUsage(chunk) ?? usage;
        files.stdout(chunkContent(chunk));
      }
    } catch (err) {
      throw withPartialUsage(streamError(err, ctx.signal), usage);
    }
    return usage ? { usage } : {};
  } finally {
    files.close();
  }
}

function streamError(err: unknown, signal: AbortSignal | undefined): unknown {
  if (err instanceof AgentError) return err;
  if (err instanceof SseIdleTimeoutError) return new AgentError('STREAM', 'xai stream idle timeout');
  if (signal?.aborted) return canceledError('xai', signal, err);
  return new AgentError('STREAM', `xai read stream: ${(err as Error).message}`, { cause: err });
}

function parseChunk(payload: string): unknown {
  try {
    return JSON.parse(payload);
  } catch (err) {
    throw new AgentError('STREAM', `xai decode stream chunk: ${(err as Error).message}`);
  }
}

function chunkContent(chunk: unknown): string {
  if (!isRecord(chunk)) return '';
  throwIfError(chunk);
  const choice = firstChoice(chunk);
  return str(choice?.delta, 'content') || str(choice?.message, 'content') || str(choice, 'text');
}

async function singleResponse(response: Response): Promise<{ content: string; usage?: UsageTotals }> {
  let body: unknown;
  try {
    body = await response.json();
  } catch (err) {
    throw new AgentError('STREAM', `xai decode response: ${(err as Error).message}`);
  }
  if (!isRecord(body)) throw new AgentError('STREAM', 'xai response missing content');
  throwIfError(body);
  const choice = firstChoice(body);
  const content = str(choice?.message, 'content') || str(choice, 'text') || str(choice?.delta, 'content');
  if (content.trim() === '') throw new AgentError('STREAM', 'xai response missing content');
  return { content, usage: restUsage(body) };
}

function throwIfError(obj: Record<string, unknown>): void {
  if (obj.error === undefined || obj.error === null) return;
  const message = isRecord(obj.error) && typeof obj.error.message === 'string' ? obj.error.message.trim() : '';
  throw new AgentError('STREAM', message || 'xai stream error');
}

function firstChoice(obj: Record<string, unknown>): Record<string, unknown> | undefined {
  return Array.isArray(obj.choices) && isRecord(obj.choices[0]) ? obj.choices[0] : undefined;
}

function str(obj: unknown, key: string): string {
  return isRecord(obj) && typeof obj[key] === 'string' ? (obj[key] as string) : '';
}
