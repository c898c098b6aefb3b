import { checkExposure, isLoopbackHost, resolveServeOptions } from '../../../apps/api/src/boot/serve-options';

describe('serve host policy (issue #13 item 4)', () => {
  it('knows loopback hosts', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'].filter(isLoopbackHost)).toHaveLength(5);
    expect(['0.0.0.0', '::', '[::]', '192.168.1.5', 'example.com', ''].filter(isLoopbackHost)).toEqual([]);
  });

  it('refuses a non-loopback host without a key, warns with --insecure-no-auth, allows it with a key', () => {
    expect(() => checkExposure('0.0.0.0', undefined, false)).toThrow(/^refusing to listen on 0\.0\.0\.0 without an API key/);
    expect(checkExposure('0.0.0.0', undefined, true)).toMatch(/^listening on 0\.0\.0\.0 with no API key/);
    expect(checkExposure('0.0.0.0', 'k3y', false)).toBeUndefined();
    expect(checkExposure('127.0.0.1', undefined, false)).toBeUndefined();
  });

  it('defaults to 127.0.0.1 and reads CONDUCTOR_INSECURE_NO_AUTH, CONDUCTOR_ALLOWED_HOSTS and CONDUCTOR_ALLOW_ANY_HOST', () => {
    const cwd = __dirname;
    expect(resolveServeOptions({ root: '/tmp/r' }, { CONDUCTOR_NO_AUTH: '1' }, cwd).host).toBe('127.0.0.1');
    expect(() => resolveServeOptions({ root: '/tmp/r' }, { CONDUCTOR_HOST: '0.0.0.0' }, cwd)).toThrow(/without an allow-list of host names/);
    const open = resolveServeOptions({ root: '/tmp/r' }, { CONDUCTOR_HOST: '0.0.0.0', CONDUCTOR_ALLOWED_HOSTS: 'a.example, b.example:9', CONDUCTOR_INSECURE_NO_AUTH: '1' }, cwd);
    expect(open.allowedHosts).toEqual(['a.example', 'b.example:9']);
    expect(open.exposureWarning).toMatch(/with no API key/);
    expect(resolveServeOptions({ root: '/tmp/r' }, { CONDUCTOR_HOST: '0.0.0.0', CONDUCTOR_ALLOW_ANY_HOST: '1', CONDUCTOR_INSECURE_NO_AUTH: '1' }, cwd).hostWarning).toMatch(/--allow-any-host/);
    expect(() => resolveServeOptions({ root: '/tmp/r' }, { CONDUCTOR_HOST: '0.0.0.0', CONDUCTOR_ALLOW_ANY_HOST: '1', CONDUCTOR_NO_AUTH: '1' }, cwd)).toThrow(/refusing --no-auth on 0\.0\.0\.0/);
  });
});
