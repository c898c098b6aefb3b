import { buildHostPolicy, exposureRefusal, hostAllowed, originHostAllowed, parseAllowedHosts, parseHost } from '../../../apps/api/src/security/host-check';

describe('Host parsing and the allow-list (issue #29)', () => {
  it('parses names and ports as a browser resolves them', () => {
    expect(parseHost('LOCALHOST:14355')).toEqual({ name: 'localhost', port: 14355 });
    expect(parseHost('localhost.:14355')).toEqual({ name: 'localhost', port: 14355 });
    expect(parseHost('[0:0::1]:80')).toEqual({ name: '[::1]', port: 80 });
    expect(parseHost('2130706433')).toEqual({ name: '127.0.0.1' });
    expect(parseHost('127.0.0.1.evil.com')).toEqual({ name: '127.0.0.1.evil.com' });
    for (const bad of ['', 'evil@localhost', 'localhost:99999', 'localhost:0', 'http://localhost', 'localhost/x', 'a b', 'evil.com.127.0.0.1', 'localhost:1:2', '[::1']) expect([bad, parseHost(bad)]).toEqual([bad, undefined]);
  });

  it('allows loopback names on the listening port only, configured names on any port or theirs', () => {
    const policy = { anyHost: false, allowed: parseAllowedHosts(['box.example', 'pinned.example:8443'], 'test') };
    const ok = (h: string, port?: number) => hostAllowed(parseHost(h)!, policy, port);
    expect(ok('localhost:14355', 14355)).toBe(true);
    expect(ok('localhost:14356', 14355)).toBe(false);
    expect(ok('localhost', 14355)).toBe(false);
    expect(ok('localhost:80')).toBe(true); // no socket (app.inject): the name decides
    expect(ok('box.example:1', 14355)).toBe(true);
    expect(ok('pinned.example:8443', 14355)).toBe(true);
    expect(ok('pinned.example', 14355)).toBe(false);
    expect(ok('sub.box.example:14355', 14355)).toBe(false);
  });

  it('checks an Origin by its host and the scheme default port', () => {
    const policy = { anyHost: false, allowed: parseAllowedHosts(['box.example:443'], 'test') };
    expect(originHostAllowed('https://box.example', policy, 14355)).toBe(true);
    expect(originHostAllowed('http://box.example', policy, 14355)).toBe(false);
    expect(originHostAllowed('http://127.0.0.1:14355', policy, 14355)).toBe(true);
    expect(originHostAllowed('null', policy, 14355)).toBe(false);
    expect(originHostAllowed('file://localhost', policy, 14355)).toBe(false);
  });

  it('adds a specific bind address, and refuses a non-loopback bind without names', () => {
    expect(buildHostPolicy('192.168.1.5', [], false).allowed).toEqual([{ name: '192.168.1.5' }]);
    expect(buildHostPolicy('fe80::1', [], false).allowed).toEqual([{ name: '[fe80::1]' }]);
    expect(buildHostPolicy('0.0.0.0', [], false).allowed).toEqual([]);
    expect(exposureRefusal('0.0.0.0', [], false)).toMatch(/^refusing to listen on 0\.0\.0\.0 without an allow-list/);
    expect(exposureRefusal('0.0.0.0', ['x.example'], false)).toBeUndefined();
    expect(exposureRefusal('0.0.0.0', [], true)).toBeUndefined();
    expect(exposureRefusal('127.0.0.1', [], false)).toBeUndefined();
    expect(() => parseAllowedHosts(['ok.example', 'http://x/'], '--allowed-host')).toThrow(/^invalid --allowed-host entry "http:\/\/x\/"/);
  });
});
