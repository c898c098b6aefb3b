import { AgentError } from '../agents.errors';
import { RestAgentConfig, RestRunContext } from '../agent.types';
import { isRecord } from '../parsers/lines';
import { lookupEnv, RunOutputFiles } from './output-files';
import { DEFAULT_IDLE_STREAM_TIMEOUT_MS, RestBackendOptions } from './rest-options';
import { canceledError, postWithRetry } from './retry';
import { SseIdleTimeoutError, sseDataEvents } from './sse';

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
 * JSON answer are both accepted.
 */
export async function runXai(ctx: RestRunContext, config: RestAgentConfig = {}, opts: RestBackendOptions = {}): Promise<void> {
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
        body: JSON.stringify({ model, messages: [{ role: 'user', content: ctx.prompt }], stream: true }),
        signal: ctx.signal,
        log: (line) => files.stderr(line),
        formatStatusError: (status, body) => `xai request failed: status ${status}: ${body}`,
      },
      opts,
    );

    const contentType = response.headers.get('content-type') ?? '';
    if (!contentType.toLowerCase().includes('text/event-stream')) {
      files.stdout(await singleResponseContent(response));
      return;
    }
    if (!response.body) throw new AgentError('STREAM', 'xai response has no body');
    try {
      for await (const payload of sseDataEvents(response.body, { idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_STREAM_TIMEOUT_MS, controller })) {
        if (payload === '[DONE]') break;
        if (payload === '') continue;
        files.stdout(chunkContent(payload));
      }
    } catch (err) {
      if (err instanceof AgentError) throw err;
      if (err instanceof SseIdleTimeoutError) throw new AgentError('STREAM', 'xai stream idle timeout');
      if (ctx.signal?.aborted) throw canceledError('xai', ctx.signal, err);
      throw new AgentError('STREAM', `xai read stream: ${(err as Error).message}`, { cause: err });
    }
  } finally {
    files.close();
  }
}

function chunkContent(payload: string): string {
  let chunk: unknown;
  try {
    chunk = JSON.parse(payload);
  } catch (err) {
    throw new AgentError('STREAM', `xai decode stream chunk: ${(err as Error).message}`);
  }
  if (!isRecord(chunk)) return '';
  throwIfError(chunk);
  const choice = firstChoice(chunk);
  return str(choice?.delta, 'content') || str(choice?.message, 'content') || str(choice, 'text');
}

async function singleResponseContent(response: Response): Promise<string> {
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
  return content;
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
