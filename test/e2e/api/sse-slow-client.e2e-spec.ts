import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { SSE_METADATA, SSE_OPTIONS_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { BusWriter } from '@app/messagebus';
import { SSE_MAX_PENDING_CHARS } from '@app/streams';
import { listenApiApp, openSse, parseSse, SseClient, SseEvent, TestApi, waitUntil } from '../../utils/api-app';

// #15: a client that stops reading is dropped once its queue passes the bound (drop-and-resync
// rule, apps/api/src/sse/slow-clients.ts) while the others keep receiving; it resumes after its
// Last-Event-ID on reconnect. Real sockets on both sides.
const P = 'slow';
const messages = (events: SseEvent[]) => events.filter((e) => e.event === 'message');

/** A raw HTTP client that reads the response head and first event, then stops reading. */
function stalledClient(port: number, url: string): Promise<{ socket: net.Socket; received: () => string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let stopped = false;
    socket.setEncoding('utf8');
    socket.on('error', () => undefined); // the server may reset it: that is the point
    socket.once('connect', () => socket.write(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`));
    const onData = (chunk: string) => {
      text += chunk;
      if (!stopped && /^HTTP\/1\.1 200/.test(text) && text.includes('event: message')) {
        stopped = true;
        socket.pause();
        resolve({ socket, received: () => text });
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before the first event: ${text.slice(0, 500)}`)));
  });
}

function connections(api: TestApi): Promise<number> {
  return new Promise((resolve, reject) => api.app.getHttpServer().getConnections((err: Error | null, n: number) => (err ? reject(err) : resolve(n))));
}

describe('SSE: a client that stops reading (#15)', () => {
  let api: TestApi & { base: string };
  let bus: BusWriter;
  const stream = `/api/projects/${P}/messages/stream`;

  beforeAll(async () => {
    api = await listenApiApp();
    fs.mkdirSync(path.join(api.root, P), { recursive: true });
    bus = new BusWriter(path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md'));
    await bus.append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: 'seed' });
  });
  afterAll(async () => api.close());

  it('is dropped while the others receive every event, and resumes after its last event id', async () => {
    const healthy: SseClient[] = [];
    for (let i = 0; i < 3; i++) healthy.push(await openSse(`${api.base}${stream}`));
    await Promise.all(healthy.map((c) => c.waitFor((ev) => messages(ev).length === 1)));
    const port = (api.app.getHttpServer().address() as net.AddressInfo).port;
    const stalled = await stalledClient(port, stream);
    const open = await connections(api);
    expect(open).toBe(4);

    // 64 KiB bodies until the stalled connection is gone: it must go long before the cap
    // (socket buffers plus SSE_MAX_PENDING_CHARS hold a few MB on loopback)
    const body = (i: number) => `${i} ${'x'.repeat(64 * 1024)}`;
    const cap = 2048;
    let posted = 0;
    while ((await connections(api)) === open) {
      if (posted >= cap) throw new Error(`the stalled client was not dropped after ${posted} messages`);
      await bus.append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: body(++posted) });
      // one message per tail wake-up: the healthy clients (in this process) read between them
      await waitUntil(() => healthy.every((c) => messages(c.events).length === posted + 1), 30_000, 5);
    }
    await bus.append({ type: 'INFO', project_id: P, task_id: '', run_id: '', body: 'after the drop' });
    const total = posted + 2; // seed + posted + after the drop

    for (const c of healthy) await c.waitFor((ev) => messages(ev).length === total, 120_000);
    const ids = messages(healthy[0].events).map((e) => e.id);
    for (const c of healthy) expect(messages(c.events).map((e) => e.id)).toEqual(ids);
    expect(JSON.parse(messages(healthy[0].events)[total - 1].data).body).toBe('after the drop');

    // the dropped client gets what its socket held, then the end of the stream
    const ended = new Promise<void>((resolve) => stalled.socket.once('close', () => resolve()));
    stalled.socket.resume();
    await ended;
    const got = messages(parseSse(stalled.received().split('\r\n\r\n').slice(1).join('\r\n\r\n')).events);
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(total);
    expect(got.map((e) => e.id)).toEqual(ids.slice(0, got.length));
    // what it missed is more than the bound: the drop came from the rule, not from a short read
    const missedChars = messages(healthy[0].events).slice(got.length).reduce((n, e) => n + e.data.length, 0);
    expect(missedChars).toBeGreaterThan(SSE_MAX_PENDING_CHARS);

    // reconnecting with its last id resumes exactly after it, without a resync
    const lastSeen = got[got.length - 1].id!;
    const resumed = await openSse(`${api.base}${stream}`, { 'Last-Event-ID': lastSeen });
    await resumed.waitFor((ev) => messages(ev).length === total - got.length, 120_000);
    expect(messages(resumed.events).map((e) => e.id)).toEqual(ids.slice(got.length));
    expect(resumed.events.some((e) => e.event === 'resync')).toBe(false);
    for (const c of [...healthy, resumed]) c.close();
    await waitUntil(async () => (await connections(api)) === 0);
  }, 240_000);

  it('starts with a resync event when the last event id is gone', async () => {
    const gone = 'MSG-19990101-000000-000000000-PID00001-0001';
    const client = await openSse(`${api.base}${stream}`, { 'Last-Event-ID': gone });
    try {
      await client.waitFor((ev) => messages(ev).length > 0);
      expect(client.events[0]).toEqual({ event: 'resync', data: JSON.stringify({ reason: 'last_event_id_not_found', last_event_id: gone }) });
      expect(client.events.filter((e) => e.event === 'resync')).toHaveLength(1);
    } finally {
      client.close();
    }
  });

  it('gives the run and log streams (NestJS @Sse) the same limit', () => {
    const routes: string[] = [];
    for (const mod of api.app.get(ModulesContainer).values()) {
      for (const wrapper of mod.controllers.values()) {
        const proto = (wrapper.metatype as { prototype: Record<string, unknown> }).prototype;
        for (const key of Object.getOwnPropertyNames(proto)) {
          const handler = proto[key];
          if (typeof handler !== 'function' || !Reflect.getMetadata(SSE_METADATA, handler)) continue;
          routes.push(`${wrapper.name}.${key}=${(Reflect.getMetadata(SSE_OPTIONS_METADATA, handler) as { maxPendingDataLength?: number }).maxPendingDataLength}`);
        }
      }
    }
    expect(routes.length).toBeGreaterThanOrEqual(4);
    expect(routes.filter((r) => !r.endsWith(`=${SSE_MAX_PENDING_CHARS}`))).toEqual([]);
  });
});
