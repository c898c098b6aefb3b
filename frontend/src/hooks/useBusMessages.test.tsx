// @vitest-environment jsdom
import { render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClient, type KeyStorage } from '../api/client';
import { useBusMessages } from './useBusMessages';

class StubEventSource {
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  readyState = 0;
  constructor(readonly url: string) {}
  addEventListener(): void {}
  removeEventListener(): void {}
  close(): void {}
}

function memoryStorage(): KeyStorage {
  const data = new Map<string, string>();
  return { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}

function Bus({ client }: { client: ApiClient }) {
  const { loadError, messages } = useBusMessages(client, 'proj', undefined);
  return <p>{loadError ?? `${messages.length} messages`}</p>;
}

describe('useBusMessages', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('loads again once the key is entered: the "needs an API key" notice goes away', async () => {
    vi.stubGlobal('EventSource', StubEventSource);
    const fetchMock = vi.fn(async (_url: string, init?: RequestInit) => {
      const auth = new Headers(init?.headers).get('Authorization');
      if (auth !== 'Bearer k3y') return new Response('{"error":"unauthorized"}', { status: 401 });
      return new Response(JSON.stringify({ messages: [{ msg_id: 'm1', ts: '2026-01-01T00:00:00Z', type: 'INFO', project_id: 'proj', body: 'hi' }] }), { status: 200 });
    });
    vi.stubGlobal('fetch', fetchMock);
    const client = new ApiClient('', memoryStorage());
    render(<Bus client={client} />);
    await screen.findByText('The server needs an API key.');
    client.setApiKey('k3y');
    await waitFor(() => expect(screen.queryByText('The server needs an API key.')).toBeNull());
    await screen.findByText('1 messages');
  });
});
