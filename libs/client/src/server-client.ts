import { apiKeyFilePath, CURSOR_PAGE_MAX, DEFAULT_SERVER_URL, isLoopbackHost, savedApiKey } from '@app/storage';
import { UsageError } from '@app/boot';

export { DEFAULT_SERVER_URL };

/** Default of `--server`: CONDUCTOR_URL or CONDUCTOR_SERVER, else http://localhost:14355. */
export function defaultServerUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.CONDUCTOR_URL?.trim() || env.CONDUCTOR_SERVER?.trim() || DEFAULT_SERVER_URL;
}

/**
 * The key a client sends: `--api-key` → $CONDUCTOR_API_KEY → the key the server generated in this
 * user's state folder ($CONDUCTOR_STATE_DIR, ~/.run-agent/api-key), for a server on this machine
 * only (a loopback URL): the saved key is never sent to another host.
 */
export function clientApiKey(flag: string | undefined, server: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = flag?.trim() || env.CONDUCTOR_API_KEY?.trim();
  if (given) return given;
  let host: string;
  try {
    host = new URL(server).hostname;
  } catch {
    return undefined; // ServerClient words the bad URL
  }
  if (!isLoopbackHost(host)) return undefined;
  try {
    return savedApiKey(env);
  } catch {
    return undefined; // an unusable key file: send none; a 401 names the file
  }
}

export class ServerClientError extends Error {
  override readonly name = 'ServerClientError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface ServerResponse {
  status: number;
  text: string;
}

/** The `message` of the API's error envelope, or the trimmed body when it is not one. */
export function errorMessageOf(body: string): string {
  const text = body.trim();
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (parsed && typeof parsed.error === 'object' && typeof parsed.error?.message === 'string') return parsed.error.message;
    if (parsed && typeof parsed.error === 'string') return parsed.error;
    if (parsed && typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: the body itself is the message
  }
  return text;
}

function unreachable(base: string): ServerClientError {
  return new ServerClientError(`cannot reach conductor at ${base}: is it running? start it with \`conductor\``);
}

/** A small HTTP client for the conductor API; sends the API key as `Authorization: Bearer` (D11). */
export class ServerClient {
  readonly base: string;

  constructor(
    server: string,
    private readonly apiKey?: string,
  ) {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new UsageError(`invalid --server URL "${server}": expected e.g. ${DEFAULT_SERVER_URL}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`invalid --server URL "${server}": only http and https are supported`);
    }
    this.base = server.replace(/\/+$/, '');
  }

  url(path: string): string {
    return this.base + path;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.apiKey) headers.Authorization = `Bearer ${this.apiKey}`;
    return headers;
  }

  /** Sends a request; network failures become the "cannot reach conductor" error. */
  async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<ServerResponse> {
    const init: RequestInit = { method, headers: this.headers(body === undefined ? {} : { 'Content-Type': 'application/json' }), signal };
    if (body !== undefined) init.body = JSON.stringify(body);
    let res: Response;
    try {
      res = await fetch(this.url(path), init);
    } catch (err) {
      if ((err as Error)?.name === 'AbortError') throw err;
      throw unreachable(this.base);
    }
    return { status: res.status, text: await res.text() };
  }

  /** Like send(), but any status outside `expect` is `server returned <code>: <message>`. */
  async call(method: string, path: string, opts: { body?: unknown; expect?: number[] } = {}): Promise<ServerResponse> {
    return expectStatus(await this.send(method, path, opts.body), opts.expect);
  }

  async getJson<T>(path: string): Promise<{ data: T; text: string }> {
    const res = await this.call('GET', path);
    return { data: parseJson<T>(res.text), text: res.text };
  }

  /**
   * Every item of a cursor-paged list (issue #29: `/api/projects`, `/api/v1/tasks`, …): pages of
   * the server's maximum, following `next_cursor` as `after=` while `has_more`.
   */
  async getAllPages<T>(path: string, key: string): Promise<T[]> {
    const all: T[] = [];
    const sep = path.includes('?') ? '&' : '?';
    for (let after = ''; ; ) {
      const { data } = await this.getJson<{ has_more?: boolean; next_cursor?: string } & Record<string, unknown>>(`${path}${sep}limit=${CURSOR_PAGE_MAX}${after && `&after=${seg(after)}`}`);
      const items = data[key];
      if (Array.isArray(items)) all.push(...(items as T[]));
      if (!data.has_more || !data.next_cursor || data.next_cursor === after) return all;
      after = data.next_cursor;
    }
  }

  /** Opens a streaming GET (SSE); non-200 answers are errors with the server's message. */
  async openStream(path: string, signal?: AbortSignal, extraHeaders: Record<string, string> = {}): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(this.url(path), { headers: this.headers({ Accept: 'text/event-stream', ...extraHeaders }), signal });
    } catch (err) {
      if ((err as Error)?.name === 'AbortError') throw err;
      throw unreachable(this.base);
    }
    if (res.status !== 200) {
      const text = await res.text().catch(() => '');
      throw statusError(res.status, text);
    }
    return res;
  }
}

/** `server returned <code>: <message>`; a 401 also says how to pass the key. */
function statusError(status: number, text: string): ServerClientError {
  const hint = status === 401 ? ` (pass --api-key or set CONDUCTOR_API_KEY; a server on this host keeps its generated key in ${apiKeyFilePath()})` : '';
  return new ServerClientError(`server returned ${status}: ${errorMessageOf(text)}${hint}`, status);
}

/** Throws `server returned <code>: <message>` unless the status is expected (default: 2xx). */
export function expectStatus(res: ServerResponse, expect?: number[]): ServerResponse {
  const ok = expect ? expect.includes(res.status) : res.status >= 200 && res.status < 300;
  if (!ok) throw statusError(res.status, res.text);
  return res;
}

export function parseJson<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ServerClientError(`decode response: not JSON: ${text.slice(0, 200)}`);
  }
}

/** Path segment, percent-encoded. */
export const seg = (value: string): string => encodeURIComponent(value);

export function query(params: Record<string, string | number | boolean | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}
