import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '@app/storage';
import { createApiApp as buildApp, ServerOptions } from '../../apps/api/src/server';
import { checkOpenApiTraffic } from './openapi-traffic';
import { waitFor } from './wait';

export const FAKE_AGENT = path.join(__dirname, '..', 'fixtures', 'agents', 'fake-command-agent');

export interface TestApi {
  app: NestFastifyApplication;
  root: string;
  dir: string;
  close(): Promise<void>;
}

/** A temp dir holding `runs/` (the runs root) and a config.yaml with a `fake` command agent. */
export function makeTempRoot(extraYaml = ''): { dir: string; root: string; configPath: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'api-e2e-'));
  const root = path.join(dir, 'runs');
  fs.mkdirSync(root);
  const configPath = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    configPath,
    [
      'agents:',
      '  fake:',
      '    type: command',
      `    command: ${FAKE_AGENT}`,
      'defaults:',
      '  agent: fake',
      '  timeout: 60',
      extraYaml,
    ].join('\n'),
  );
  return { dir, root, configPath };
}

/** Builds the server for app.inject tests (no socket). */
export async function createApiApp(options: Partial<ServerOptions> & { extraYaml?: string } = {}): Promise<TestApi> {
  const tmp = makeTempRoot(options.extraYaml);
  const root = options.root ?? tmp.root;
  const app = await buildApp({
    root,
    config: options.config ?? loadConfig(tmp.configPath, { strict: false }),
    stopGraceMs: 2000,
    beforeReady: checkOpenApiTraffic,
    ...options,
  });
  return {
    app,
    root,
    dir: tmp.dir,
    close: async () => {
      await app.close();
      // a runner the test stopped may still be writing its last records as it exits (ENOTEMPTY):
      // removed once it has (waitFor retries what throws; 10 × 50 ms was too short under load)
      await waitFor('the test root removed', () => {
        fs.rmSync(tmp.dir, { recursive: true, force: true });
        return true;
      }, 15_000);
    },
  };
}

/** Builds the server and listens on 127.0.0.1:<ephemeral> for real-socket tests (SSE). */
export async function listenApiApp(options: Partial<ServerOptions> & { extraYaml?: string } = {}): Promise<TestApi & { base: string }> {
  const api = await createApiApp({ sse: { heartbeatIntervalMs: 60000, pollIntervalMs: 50, discoveryIntervalMs: 50 }, ...options });
  await api.app.listen(0, '127.0.0.1');
  const address = api.app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { ...api, base: `http://127.0.0.1:${port}` };
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Parses an SSE text buffer into events; returns the events and the unparsed rest. */
export function parseSse(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const ev: SseEvent = { data: '' };
    const data: string[] = [];
    let any = false;
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      any = true;
      if (field === 'id') ev.id = value;
      else if (field === 'event') ev.event = value;
      else if (field === 'data') data.push(value);
    }
    if (!any) continue;
    ev.data = data.join('\n');
    events.push(ev);
  }
  return { events, rest };
}

/** A live SSE connection over a real socket. */
export interface SseClient {
  status: number;
  headers: Headers;
  events: SseEvent[];
  waitFor(pred: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let ended: Promise<void> = Promise.resolve();
  if (res.ok && res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    ended = (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          const parsed = parseSse(buffer);
          buffer = parsed.rest;
          if (parsed.events.length) {
            events.push(...parsed.events);
            waiters.forEach((w) => w());
          }
        }
      } catch {
        // aborted
      } finally {
        waiters.forEach((w) => w());
      }
    })();
  }
  let finished = false;
  void ended.then(() => (finished = true));
  return {
    status: res.status,
    headers: res.headers,
    events,
    ended,
    close: () => controller.abort(),
    waitFor: (pred, timeoutMs = 15000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (pred(events)) {
            cleanup();
            resolve(events);
          } else if (finished) {
            cleanup();
            reject(new Error(`stream ended; events: ${JSON.stringify(events).slice(0, 2000)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timeout; events: ${JSON.stringify(events).slice(0, 2000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
  };
}

/** Reads an SSE stream until `pred` holds (or it ends), then closes it. */
export async function collectSse(url: string, pred: (events: SseEvent[]) => boolean, headers: Record<string, string> = {}, timeoutMs = 15000): Promise<SseEvent[]> {
  const client = await openSse(url, headers);
  try {
    return await client.waitFor(pred, timeoutMs);
  } finally {
    client.close();
  }
}

/** Polls `fn` until it returns a truthy value. */
/** {@link waitFor} under its older name: resolves with the first truthy value of `fn`. */
export async function waitUntil<T>(fn: () => T | Promise<T>, timeoutMs = 20000, stepMs = 50): Promise<NonNullable<T>> {
  return (await waitFor('condition', async () => (await fn()) || undefined, { timeoutMs, intervalMs: stepMs })) as NonNullable<T>;
}
