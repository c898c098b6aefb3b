// @vitest-environment jsdom
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { act, renderHook, waitFor } from '@testing-library/react';
import { EventSource as NodeEventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, type KeyStorage } from '../src/api/client';
import type { BusMessage } from '../src/api/types';
import { useBusMessages } from '../src/hooks/useBusMessages';

const noKey: KeyStorage = { getItem: () => null, setItem: () => undefined, removeItem: () => undefined };
const msg = (n: number): BusMessage => ({ msg_id: `MSG-${n}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), type: 'INFO', project_id: 'p1', body: `message ${n}` });
const sse = (res: ServerResponse, text: string) => res.write(text);
const messageEvent = (m: BusMessage) => `event: message\nid: ${m.msg_id}\ndata: ${JSON.stringify(m)}\n\n`;

/*
 * A real HTTP server on 127.0.0.1 standing in for the bus routes, and a real EventSource client
 * (the `eventsource` package: jsdom has none) that reconnects with Last-Event-ID like a browser.
 * First connection: MSG-1, then the connection drops. Meanwhile the bus is rotated: MSG-1 is gone,
 * MSG-2..MSG-5 were written. The reconnect cannot resume after MSG-1: `resync`, then the last
 * message (MSG-5), as the server's bus hub does.
 */
describe('useBusMessages: a `resync` event re-lists the bus', () => {
  let server: Server;
  let base = '';
  let rotated = false;
  let refuseNext = false;
  const streams: { lastEventId?: string }[] = [];
  const lists: string[] = [];
  const open: ServerResponse[] = [];

  beforeAll(async () => {
    (globalThis as Record<string, unknown>).EventSource = NodeEventSource;
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/api/projects/p1/messages') {
        lists.push(req.url ?? '');
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ messages: rotated ? [2, 3, 4, 5].map(msg) : [msg(1)] }));
        return;
      }
      if (url.pathname === '/api/projects/p1/messages/stream') {
        const lastEventId = req.headers['last-event-id'] as string | undefined;
        streams.push({ lastEventId });
        res.writeHead(refuseNext && rotated ? 503 : 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        open.push(res);
        if (!rotated) {
          sse(res, 'retry: 20\n\n');
          sse(res, messageEvent(msg(1)));
        } else if (refuseNext) {
          // an HTTP error: the EventSource gives up, the hook opens a new one later (no Last-Event-ID)
          refuseNext = false;
          res.end();
          return;
        } else if (!lastEventId) {
          sse(res, messageEvent(msg(5)));
        } else if (lastEventId === 'MSG-1') {
          sse(res, `event: resync\ndata: ${JSON.stringify({ reason: 'last_event_id_not_found', last_event_id: lastEventId })}\n\n`);
          sse(res, messageEvent(msg(5)));
        }
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const res of open) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    delete (globalThis as Record<string, unknown>).EventSource;
  });

  it('replaces the shown messages with the fresh list instead of leaving a gap', async () => {
    const client = new ApiClient(base, noKey);
    const { result, unmount } = renderHook(() => useBusMessages(client, 'p1', undefined));
    await waitFor(() => expect(result.current.messages.map((m) => m.msg_id)).toEqual(['MSG-1']));
    await waitFor(() => expect(result.current.state).toBe('open'));
    expect(lists).toHaveLength(1);

    // the bus is rotated while the connection is down; the client reconnects with Last-Event-ID
    rotated = true;
    act(() => open[0].destroy());
    await waitFor(() => expect(streams[1]).toEqual({ lastEventId: 'MSG-1' }));
    await waitFor(() => expect(result.current.messages.map((m) => m.msg_id)).toEqual(['MSG-2', 'MSG-3', 'MSG-4', 'MSG-5']));
    expect(lists).toHaveLength(2);
    expect(result.current.loadError).toBeNull();
    unmount();
  });

  it('re-lists too when a new EventSource replaces one the browser gave up on (it cannot resume)', async () => {
    rotated = false;
    streams.length = 0;
    lists.length = 0;
    const client = new ApiClient(base, noKey);
    const { result, unmount } = renderHook(() => useBusMessages(client, 'p1', undefined));
    await waitFor(() => expect(result.current.messages.map((m) => m.msg_id)).toEqual(['MSG-1']));
    await waitFor(() => expect(result.current.state).toBe('open'));
    rotated = true;
    refuseNext = true;
    act(() => open[open.length - 1].destroy());
    // the refused reconnect, then (after the hook's pause) a fresh stream without Last-Event-ID
    await waitFor(() => expect(streams.slice(1)).toEqual([{ lastEventId: 'MSG-1' }, { lastEventId: undefined }]), { timeout: 10_000 });
    await waitFor(() => expect(result.current.messages.map((m) => m.msg_id)).toEqual(['MSG-2', 'MSG-3', 'MSG-4', 'MSG-5']));
    expect(lists).toHaveLength(2);
    unmount();
  }, 20_000);
});
