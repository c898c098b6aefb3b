import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentError,
  AgentRegistry,
  classifyHttpFailure,
  isFatalAgentError,
  parseRetryAfter,
  RateLimitedError,
  RestBackendOptions,
  RestRunContext,
  runPerplexity,
  runXai,
  xaiEndpoint,
} from '@app/agents';
import { waitFor } from '../../utils/wait';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'agents', 'streams');

type Handler = (res: ServerResponse, req: IncomingMessage) => void | Promise<void>;
interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP server on 127.0.0.1 answering requests with the handlers in turn (the last one repeats). */
async function startServer(handlers: Handler[]): Promise<{ url: string; requests: Recorded[]; close: () => Promise<void> }> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const handler = handlers[Math.min(requests.length, handlers.length) - 1];
      void handler(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sse = (text: string, pieces = 1): Handler => async (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  // Several writes that split lines and events arbitrarily, as a real network would.
  const size = Math.ceil(text.length / pieces);
  for (let i = 0; i < text.length; i += size) {
    res.write(text.slice(i, i + size));
    await new Promise((r) => setImmediate(r));
  }
  res.end();
};
const status = (code: number, body = '', headers: Record<string, string> = {}): Handler => (res) => {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(body);
};
const event = (obj: unknown) => `data: ${JSON.stringify(obj)}\n\n`;
const chunk = (content: string, extra: Record<string, unknown> = {}) => event({ choices: [{ index: 0, delta: { content } }], ...extra });

describe('REST backends', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let delays: number[];
  let opts: RestBackendOptions;
  const stdout = () => readFileSync(join(dir, 'agent-stdout.txt'), 'utf8');
  const stderr = () => readFileSync(join(dir, 'agent-stderr.txt'), 'utf8');
  const ctx = (extra: Partial<RestRunContext> = {}): RestRunContext => ({
    prompt: 'What is new in Go 1.24?',
    env: {},
    stdoutPath: join(dir, 'agent-stdout.txt'),
    stderrPath: join(dir, 'agent-stderr.txt'),
    ...extra,
  });
  const serve = async (...handlers: Handler[]) => {
    server = await startServer(handlers);
    return server;
  };
  const failure = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentError);
    return err as AgentError;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agents-rest-'));
    delays = [];
    // Retries keep their real schedule, but the test records the delays instead of waiting.
    opts = { sleep: async (ms) => void delays.push(ms) };
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  describe('perplexity', () => {
    it('streams the upstream sample and appends the sources', async () => {
      const s = await serve(sse(readFileSync(join(fixtures, 'perplexity-sample.sse'), 'utf8'), 7));
      await runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'pk' } }), { base_url: `${s.url}/custom/path`, model: 'sonar-pro' }, opts);
      expect(stdout()).toBe('Go 1.24 adds generic type aliases.\n\nSources:\n[1] https://go.dev/doc/go1.24\n');
      expect(s.requests).toHaveLength(1);
      const [req] = s.requests;
      expect(req).toMatchObject({ method: 'POST', url: '/custom/path' });
      expect(req.headers).toMatchObject({ authorization: 'Bearer pk', 'content-type': 'application/json', accept: 'text/event-stream' });
      expect(JSON.parse(req.body)).toEqual({ model: 'sonar-pro', messages: [{ role: 'user', content: 'What is new in Go 1.24?' }], stream: true });
      expect(stderr()).toBe('');
    });

    it('uses the default model and prefers the run env token over the config token', async () => {
      const s = await serve(sse(chunk('ok') + 'data: [DONE]\n\n'));
      await runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'from-env' } }), { base_url: s.url, token: 'from-config' }, opts);
      expect(s.requests[0].headers.authorization).toBe('Bearer from-env');
      expect(JSON.parse(s.requests[0].body).model).toBe('sonar-reasoning');
      await runPerplexity(ctx(), { base_url: s.url, token: 'from-config' }, opts);
      expect(s.requests[1].headers.authorization).toBe('Bearer from-config');
    });

    it('de-duplicates citations, falls back to search results, and tolerates cumulative content', async () => {
      const body =
        chunk('Alpha', { citations: ['https://a.example', ' https://a.example '] }) +
        event({ choices: [{ delta: { content: 'Alpha beta' } }], citations: ['https://b.example'] }) +
        event({ choices: [{ message: { content: ' gamma' } }] }) +
        'data: [DONE]\n\n' +
        chunk('after done is ignored');
      const s = await serve(sse(body, 3), sse(chunk('Only', { search_results: [{ url: 'https://s1' }, { url: 'https://s1' }, { url: 'https://s2' }] })));
      await runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts);
      expect(stdout()).toBe('Alpha beta gamma\n\nSources:\n[1] https://a.example\n[2] https://b.example\n');
      await runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts);
      expect(stdout()).toBe('Only\n\nSources:\n[1] https://s1\n[2] https://s2\n');
    });

    it('retries 5xx and rate limits after 1 s and 2 s, then succeeds', async () => {
      const s = await serve(status(503, 'busy'), status(429, '{"error":{"message":"rate limit"}}'), sse(chunk('fine') + 'data: [DONE]\n\n'));
      await runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts);
      expect(s.requests).toHaveLength(3);
      expect(delays).toEqual([1000, 2000]);
      expect(stdout()).toBe('fine');
      expect(stderr()).toBe('perplexity retry in 1s after status 503\nperplexity retry in 2s after status 429\n');
    });

    it('gives up after 3 retries (1 s, 2 s, 4 s) with a transient HTTP error', async () => {
      const s = await serve(status(500, 'boom'));
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts));
      expect(err.code).toBe('HTTP');
      expect(err.message).toBe('perplexity api error: status 500: boom');
      expect(s.requests).toHaveLength(4);
      expect(delays).toEqual([1000, 2000, 4000]);
    });

    it('ends at once with RATE_LIMITED until the Retry-After time on a rate limit (the loop waits, not the run)', async () => {
      const s = await serve(status(429, 'slow down', { 'retry-after': '3' }), sse(chunk('ok')));
      const before = Date.now();
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts));
      expect(err).toBeInstanceOf(RateLimitedError);
      const until = (err as RateLimitedError).resumeAt.getTime();
      expect(until).toBeGreaterThanOrEqual(before + 3000);
      expect(until).toBeLessThanOrEqual(Date.now() + 3000);
      expect(err.message).toBe(`perplexity api error: status 429: slow down; rate limited until ${new Date(until).toISOString()}`);
      expect(isFatalAgentError(err)).toBe(false);
      expect(s.requests).toHaveLength(1);
      expect(delays).toEqual([]);
    });

    it.each([401, 403])('fails at once with AUTH on %i', async (code) => {
      const s = await serve(status(code, '{"error":"invalid key"}'));
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'bad' } }), { base_url: s.url }, opts));
      expect(err.code).toBe('AUTH');
      expect(err.message).toBe(`perplexity api error: status ${code}: {"error":"invalid key"}`);
      expect(s.requests).toHaveLength(1);
      expect(delays).toEqual([]);
    });

    it('fails at once with QUOTA on a 429 that says the quota is exhausted', async () => {
      const s = await serve(status(429, '{"error":{"type":"insufficient_quota","message":"You exceeded your current quota"}}'));
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts));
      expect(err.code).toBe('QUOTA');
      expect(s.requests).toHaveLength(1);
    });

    it('does not retry other client errors', async () => {
      const s = await serve(status(400, 'model sonar-reasoning is deprecated'));
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts));
      expect(err).toMatchObject({ code: 'HTTP', message: 'perplexity api error: status 400: model sonar-reasoning is deprecated' });
      expect(s.requests).toHaveLength(1);
    });

    it('does not retry an error inside the stream, keeping what was written', async () => {
      const s = await serve(sse(chunk('Partial ') + event({ error: { message: 'upstream model crashed' } })));
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts));
      expect(err).toMatchObject({ code: 'STREAM', message: 'upstream model crashed' });
      expect(s.requests).toHaveLength(1);
      expect(stdout()).toBe('Partial ');
    });

    it('fails on finish_reason error and on an undecodable chunk', async () => {
      const s = await serve(sse(event({ choices: [{ delta: { content: 'x' }, finish_reason: 'error' }] })), sse('data: {not json\n\n'));
      await expect(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts)).rejects.toMatchObject({
        code: 'STREAM',
        message: 'perplexity stream finished with error',
      });
      await expect(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, opts)).rejects.toMatchObject({ code: 'STREAM' });
    });

    it('fails with a stream idle timeout when the server goes quiet', async () => {
      const s = await serve((res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('started'));
        // ...and never another byte.
      });
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: s.url }, { ...opts, idleTimeoutMs: 150 }));
      expect(err).toMatchObject({ code: 'STREAM', message: 'perplexity stream idle timeout' });
      expect(stdout()).toBe('started');
    });

    it('retries transport errors and reports them after the last retry', async () => {
      const s = await serve(status(200));
      const deadUrl = s.url;
      await s.close();
      server = undefined;
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' } }), { base_url: deadUrl }, opts));
      expect(err.code).toBe('HTTP');
      expect(err.message).toMatch(/^perplexity send request: fetch failed/);
      expect(delays).toEqual([1000, 2000, 4000]);
      expect(stderr()).toMatch(/^perplexity retry in 1s after error: fetch failed/);
    });

    it('stops when the caller aborts', async () => {
      const controller = new AbortController();
      const s = await serve((res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('before abort'));
        setImmediate(() => controller.abort());
      });
      const err = await failure(runPerplexity(ctx({ env: { PERPLEXITY_API_KEY: 'k' }, signal: controller.signal }), { base_url: s.url }, opts));
      expect(err.message).toBe('perplexity request canceled: This operation was aborted');
    });

    it('names a deadline as the reason when a timeout signal cancels the stream', async () => {
      const s = await serve((res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk('slow'));
      });
      // A real timeout signal, started once the first chunk is out: a fixed 100 ms from the call
      // could fire before it arrived on a loaded machine.
      const controller = new AbortController();
      const pending = failure(runXai(ctx({ env: { XAI_API_KEY: 'k' }, signal: controller.signal }), { base_url: s.url }, opts));
      await waitFor('the first chunk to be written out', () => existsSync(join(dir, 'agent-stdout.txt')) && stdout() === 'slow');
      const deadline = AbortSignal.timeout(1);
      deadline.addEventListener('abort', () => controller.abort(deadline.reason));
      const err = await pending;
      expect(err.message).toMatch(/^xai request canceled: .*timeout/i);
      expect(stdout()).toBe('slow');
    });

    it('fails without a token before any request, truncating old output', async () => {
      const saved = process.env.PERPLEXITY_API_KEY;
      delete process.env.PERPLEXITY_API_KEY;
      try {
        const s = await serve(status(200));
        const err = await failure(runPerplexity(ctx(), { base_url: s.url }, opts));
        expect(err).toMatchObject({ code: 'INVALID_CONFIG', message: 'perplexity api token is empty' });
        expect(s.requests).toHaveLength(0);
        expect(stdout()).toBe('');
      } finally {
        if (saved !== undefined) process.env.PERPLEXITY_API_KEY = saved;
      }
    });
  });

  describe('xai', () => {
    it('streams the upstream sample with the xai headers, echoing it live', async () => {
      const s = await serve(sse(readFileSync(join(fixtures, 'xai-sample.sse'), 'utf8'), 5));
      const echoed: string[] = [];
      await runXai(ctx({ env: { XAI_API_KEY: 'xk' }, echo: (t) => echoed.push(t) }), { base_url: s.url }, opts);
      expect(stdout()).toBe('Hello from Grok.');
      expect(echoed.join('')).toBe('Hello from Grok.');
      const [req] = s.requests;
      expect(req.url).toBe('/v1/chat/completions');
      expect(req.headers).toMatchObject({ authorization: 'Bearer xk', 'user-agent': 'conductor-loop/xai', accept: 'text/event-stream' });
      expect(JSON.parse(req.body)).toEqual({ model: 'grok-4', messages: [{ role: 'user', content: 'What is new in Go 1.24?' }], stream: true, stream_options: { include_usage: true } });
    });

    it('lets env endpoint and model overrides beat the config, and the config token beat the env key', async () => {
      const s = await serve(sse(chunk('ok')));
      await runXai(ctx({ env: { XAI_API_KEY: 'env-key', XAI_BASE_URL: `${s.url}/v1`, XAI_MODEL: 'grok-code' } }), { base_url: 'http://127.0.0.1:9/never', token: 'cfg-key', model: 'grok-3' }, opts);
      expect(s.requests[0]).toMatchObject({ url: '/v1/chat/completions' });
      expect(s.requests[0].headers.authorization).toBe('Bearer cfg-key');
      expect(JSON.parse(s.requests[0].body).model).toBe('grok-code');
    });

    it('writes stream chunks raw and skips comments', async () => {
      const s = await serve(sse(': keep-alive\n\n' + chunk('a ') + chunk('a b') + event({ choices: [{ text: '!' }] }) + 'data: [DONE]\n\n'));
      await runXai(ctx({ env: { XAI_API_KEY: 'k' } }), { base_url: s.url }, opts);
      expect(stdout()).toBe('a a b!');
    });

    it('accepts a single JSON answer', async () => {
      const s = await serve(status(200, JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'one shot' } }] })), status(200, '{"choices":[]}'));
      await runXai(ctx({ env: { XAI_API_KEY: 'k' } }), { base_url: s.url }, opts);
      expect(stdout()).toBe('one shot');
      await expect(runXai(ctx({ env: { XAI_API_KEY: 'k' } }), { base_url: s.url }, opts)).rejects.toMatchObject({ message: 'xai response missing content' });
    });

    it('reports statuses in the upstream format, retrying only transient ones', async () => {
      const s = await serve(status(502, 'bad gateway'), status(422, '{"error":"bad model"}'));
      const err = await failure(runXai(ctx({ env: { XAI_API_KEY: 'k' } }), { base_url: s.url }, opts));
      expect(err).toMatchObject({ code: 'HTTP', message: 'xai request failed: status 422: {"error":"bad model"}' });
      expect(delays).toEqual([1000]);
      expect(stderr()).toBe('xai retry in 1s after status 502\n');
    });

    it('fails with AUTH on 401 and with STREAM on an error chunk', async () => {
      const s = await serve(status(401, 'no'), sse(event({ error: { message: 'context too long' } })));
      await expect(runXai(ctx({ env: { XAI_API_KEY: 'k' } }), { base_url: s.url }, opts)).rejects.toMatchObject({ code: 'AUTH' });
      await expect(runXai(ctx({ env: { XAI_API_KEY: 'k' } }), { base_url: s.url }, opts)).rejects.toMatchObject({ code: 'STREAM', message: 'context too long' });
      expect(s.requests).toHaveLength(2);
    });

    it('requires a key and a prompt', async () => {
      const saved = process.env.XAI_API_KEY;
      delete process.env.XAI_API_KEY;
      try {
        await expect(runXai(ctx(), {}, opts)).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: 'xai api key is empty' });
        await expect(runXai(ctx({ prompt: '  ', env: { XAI_API_KEY: 'k' } }), {}, opts)).rejects.toMatchObject({ message: 'prompt is empty' });
      } finally {
        if (saved !== undefined) process.env.XAI_API_KEY = saved;
      }
    });

    it.each([
      ['https://api.x.ai', 'https://api.x.ai/v1/chat/completions'],
      ['https://api.x.ai/', 'https://api.x.ai/v1/chat/completions'],
      ['https://proxy.example/v1', 'https://proxy.example/v1/chat/completions'],
      ['https://proxy.example/v1/', 'https://proxy.example/v1/chat/completions'],
      ['https://proxy.example/xai', 'https://proxy.example/xai/v1/chat/completions'],
      ['https://proxy.example/v1/chat/completions', 'https://proxy.example/v1/chat/completions'],
      ['', 'https://api.x.ai/v1/chat/completions'],
    ])('derives the endpoint from %p', (base, endpoint) => {
      expect(xaiEndpoint(base)).toBe(endpoint);
    });

    it('rejects a base URL that is not a URL', () => {
      expect(() => xaiEndpoint('not a url')).toThrow(AgentError);
    });
  });

  it('runs through a registry spec with the config bound at resolve time', async () => {
    const s = await serve(sse(chunk('via registry') + 'data: [DONE]\n\n'));
    const registry = new AgentRegistry();
    registry.restOptions = opts;
    const spec = await registry.resolve({ name: 'pplx', type: 'perplexity', base_url: s.url, token: 'cfg', model: 'sonar-pro' });
    expect(spec.kind).toBe('rest');
    if (spec.kind === 'rest') await spec.run(ctx());
    expect(stdout()).toBe('via registry');
    expect(s.requests[0].headers.authorization).toBe('Bearer cfg');
  });
});

describe('retry helpers', () => {
  it('classifies failures', () => {
    expect(classifyHttpFailure(401, '')).toBe('auth');
    expect(classifyHttpFailure(403, '')).toBe('auth');
    expect(classifyHttpFailure(429, 'Rate limit reached')).toBe('transient');
    expect(classifyHttpFailure(429, '{"code":"insufficient_quota"}')).toBe('quota');
    expect(classifyHttpFailure(408, '')).toBe('transient');
    expect(classifyHttpFailure(503, '')).toBe('transient');
    expect(classifyHttpFailure(404, '')).toBe('permanent');
  });

  it('parses Retry-After seconds and dates, capped at a minute', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('3600', now)).toBe(60000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('0', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
