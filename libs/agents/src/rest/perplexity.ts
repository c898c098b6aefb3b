import { AgentError } from '../agents.errors';
import { RestAgentConfig, RestRunContext, RestRunResult } from '../agent.types';
import type { UsageTotals } from '@app/contracts';
import { isRecord } from '../parsers/lines';
import { RunOutputFiles } from './output-files';
import { DEFAULT_IDLE_STREAM_TIMEOUT_MS, RestBackendOptions } from './rest-options';
import { canceledError, postWithRetry } from './retry';
import { SseIdleTimeoutError, sseDataEvents } from './sse';
import { restUsage, withPartialUsage } from './usage';

export const PERPLEXITY_DEFAULT_ENDPOINT = 'https://api.perplexity.ai/chat/completions';
export const PERPLEXITY_DEFAULT_MODEL = 'sonar-reasoning';
const TOKEN_VAR = 'PERPLEXITY_API_KEY';

interface StreamState {
  written: string;
  citations: string[];
  searchResultUrls: string[];
  /** Perplexity repeats the running usage on chunks; the last one is the request's total. */
  usage?: UsageTotals;
}

/**
 * Runs one Perplexity chat completion (runner-agents.md §4.4): streams the answer into the
 * stdout file and appends the sources as `\n\nSources:\n[1] <url>\n…`. `base_url` is the full
 * endpoint URL. Resolves with the `usage` (and `cost.total_cost`) of the last chunk that carried one.
 */
export async function runPerplexity(ctx: RestRunContext, config: RestAgentConfig = {}, opts: RestBackendOptions = {}): Promise<RestRunResult> {
  const files = new RunOutputFiles(ctx.stdoutPath, ctx.stderrPath, ctx.echo);
  try {
    const token = ctx.env[TOKEN_VAR]?.trim() || config.token?.trim() || process.env[TOKEN_VAR]?.trim() || '';
    if (!token) throw new AgentError('INVALID_CONFIG', 'perplexity api token is empty');
    const endpoint = config.base_url?.trim() || PERPLEXITY_DEFAULT_ENDPOINT;
    const model = config.model?.trim() || PERPLEXITY_DEFAULT_MODEL;

    const { response, controller } = await postWithRetry(
      {
        label: 'perplexity',
        url: endpoint,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: ctx.prompt }], stream: true }),
        signal: ctx.signal,
        log: (line) => files.stderr(line),
        formatStatusError: (status, body) => `perplexity api error: status ${status}${body ? `: ${body.slice(0, 8192)}` : ''}`,
      },
      opts,
    );
    if (!response.body) throw new AgentError('STREAM', 'perplexity response has no body');

    const state: StreamState = { written: '', citations: [], searchResultUrls: [] };
    try {
      for await (const payload of sseDataEvents(response.body, { idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_STREAM_TIMEOUT_MS, controller })) {
        if (payload === '[DONE]') break;
        handleChunk(payload, state, files);
      }
    } catch (err) {
      throw withPartialUsage(streamError(err, ctx.signal), state.usage);
    }
    files.stdout(formatSources(state));
    return state.usage ? { usage: state.usage } : {};
  } finally {
    files.close();
  }
}

function streamError(err: unknown, signal: AbortSignal | undefined): unknown {
  if (err instanceof AgentError) return err;
  if (err instanceof SseIdleTimeoutError) return new AgentError('STREAM', 'perplexity stream idle timeout');
  if (signal?.aborted) return canceledError('perplexity', signal, err);
  return new AgentError('STREAM', `perplexity read stream: ${(err as Error).message}`, { cause: err });
}

function handleChunk(payload: string, state: StreamState, files: RunOutputFiles): void {
  if (payload.trim() === '') return;
  let chunk: unknown;
  try {
    chunk = JSON.parse(payload);
  } catch (err) {
    throw new AgentError('STREAM', `perplexity parse stream chunk: ${(err as Error).message}`);
  }
  if (!isRecord(chunk)) return;
  if (chunk.error !== undefined && chunk.error !== null) {
    const message = isRecord(chunk.error) && typeof chunk.error.message === 'string' ? chunk.error.message.trim() : '';
    throw new AgentError('STREAM', message || 'perplexity stream error');
  }
  const choice = Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : undefined;
  if (choice) {
    if (choice.finish_reason === 'error') throw new AgentError('STREAM', 'perplexity stream finished with error');
    let content = contentOf(choice.delta) || contentOf(choice.message);
    // Some responses repeat the whole text so far; only the new part is written.
    if (state.written !== '' && content.startsWith(state.written)) content = content.slice(state.written.length);
    files.stdout(content);
    state.written += content;
  }
  state.usage = restUsage(chunk) ?? state.usage;
  if (Array.isArray(chunk.citations)) {
    for (const c of chunk.citations) if (typeof c === 'string') state.citations.push(c);
  }
  if (Array.isArray(chunk.search_results)) {
    for (const r of chunk.search_results) if (isRecord(r) && typeof r.url === 'string') state.searchResultUrls.push(r.url);
  }
}

function contentOf(value: unknown): string {
  return isRecord(value) && typeof value.content === 'string' ? value.content : '';
}

/** De-duplicated citations, or the search-result URLs when there are none. */
export function formatSources(state: Pick<StreamState, 'citations' | 'searchResultUrls'>): string {
  const unique = (urls: string[]) => [...new Set(urls.map((u) => u.trim()).filter((u) => u !== ''))];
  let items = unique(state.citations);
  if (items.length === 0) items = unique(state.searchResultUrls);
  if (items.length === 0) return '';
  return `\n\nSources:\n${items.map((url, i) => `[${i + 1}] ${url}\n`).join('')}`;
}
