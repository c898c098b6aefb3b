import { describe, expect, it } from 'vitest';
import { adoptKeyFromFragment, ApiClient, type KeyStorage } from '../src/api/client';

function memoryStorage(): KeyStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}

function fakeHistory() {
  const urls: string[] = [];
  return { urls, state: null, replaceState: (_s: unknown, _t: string, url?: string | URL | null) => void urls.push(String(url)) };
}

describe('the key in the dashboard link (#token=…)', () => {
  it('is stored like an entered key and removed from the address bar', () => {
    const storage = memoryStorage();
    const client = new ApiClient('', storage);
    const hist = fakeHistory();
    expect(adoptKeyFromFragment(client, { hash: '#token=abc_DEF-123', pathname: '/ui/', search: '' }, hist)).toBe(true);
    expect(client.apiKey).toBe('abc_DEF-123');
    expect(hist.urls).toEqual(['/ui/']);
  });

  it('keeps the rest of the URL and of the fragment', () => {
    const client = new ApiClient('', memoryStorage());
    const hist = fakeHistory();
    adoptKeyFromFragment(client, { hash: '#token=k3y&x=1', pathname: '/ui/', search: '?project=p' }, hist);
    expect(client.apiKey).toBe('k3y');
    expect(hist.urls).toEqual(['/ui/?project=p#x=1']);
  });

  it('leaves a URL without a token alone', () => {
    const client = new ApiClient('', memoryStorage());
    const hist = fakeHistory();
    expect(adoptKeyFromFragment(client, { hash: '#x=1', pathname: '/ui/', search: '' }, hist)).toBe(false);
    expect(adoptKeyFromFragment(client, { hash: '', pathname: '/ui/', search: '' }, hist)).toBe(false);
    expect(client.apiKey).toBeNull();
    expect(hist.urls).toEqual([]);
  });

  it('tells listeners when the key changes', () => {
    const client = new ApiClient('', memoryStorage());
    let changes = 0;
    const off = client.onKeyChange(() => changes++);
    client.setApiKey('one');
    off();
    client.setApiKey('two');
    expect(changes).toBe(1);
  });
});
