import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bwrapArgs, CREDENTIAL_PLACEHOLDER, EGRESS_FORWARDER_FD_JS, EGRESS_FORWARDER_JS, EGRESS_LAUNCHER_PL, egressAllowList, hostAllowed, injectCredential, providerCredential, sandboxModeFor } from '@app/sandbox';
import { type AppConfig, loadConfig, type SandboxMode } from '@app/storage';

describe('sandbox policy', () => {
  it('host entries: bare host = ports 80/443, host:port = that port, exact names only', () => {
    const allow = ['api.anthropic.com', '127.0.0.1:8080'];
    expect(hostAllowed(allow, 'API.anthropic.com', 443)).toBe(true);
    expect(hostAllowed(allow, 'api.anthropic.com', 22)).toBe(false);
    expect(hostAllowed(allow, 'evil.api.anthropic.com', 443)).toBe(false);
    expect(hostAllowed(allow, '127.0.0.1', 8080)).toBe(true);
    expect(hostAllowed(allow, '127.0.0.1', 80)).toBe(false);
  });

  it('allow-list of a run: config, agent, provider host, base_url host', () => {
    expect(egressAllowList(undefined, { type: 'claude', allow_hosts: ['x.test'], base_url: 'http://127.0.0.1:9' })).toEqual(['x.test', 'api.anthropic.com', '127.0.0.1:9']);
  });

  it('an HTTPS provider: the agent gets a plain-HTTP base URL and a placeholder; the proxy forwards over TLS', () => {
    const c = providerCredential({ type: 'codex' }, { OPENAI_API_KEY: 'sk-real' });
    expect(c?.env).toEqual({ OPENAI_API_KEY: CREDENTIAL_PLACEHOLDER, OPENAI_BASE_URL: 'http://api.openai.com' });
    expect(c?.credential).toMatchObject({ host: 'api.openai.com', port: 80, tls: true, tlsPort: 443 });
    expect(injectCredential({ authorization: `Bearer ${CREDENTIAL_PLACEHOLDER}` }, c!.credential)).toEqual({ authorization: 'Bearer sk-real' });
    expect(injectCredential({}, c!.credential)).toEqual({ authorization: 'Bearer sk-real' });
    expect(providerCredential({ type: 'command' }, { OPENAI_API_KEY: 'x' })).toBeUndefined();
  });

  it('bwrap argv: read-only root first, home and runs root hidden, task and worktree writable, no network', () => {
    const a = bwrapArgs({ command: '/bin/agent', args: ['-p'], cwd: '/w/tree', taskDir: '/r/p/t', runsRoot: '/r', home: '/home/u', homeWrite: ['/'] });
    const s = a.join(' ');
    expect(s).toContain('--unshare-net');
    expect(s.indexOf('--ro-bind / /')).toBeLessThan(s.indexOf('--tmpfs /home/u'));
    expect(s.indexOf('--tmpfs /r ')).toBeLessThan(s.indexOf('--bind /r/p/t /r/p/t'));
    expect(s).toContain('--bind /w/tree /w/tree');
    expect(a.slice(-3)).toEqual(['sh', '/bin/agent', '-p']);
  });

  it('egress start: with a system perl the agent is exec\'d at once behind a bound port; without one it waits for the node forwarder', () => {
    const base = { command: '/bin/agent', args: ['-p'], cwd: '/w/tree', taskDir: '/r/p/t', runsRoot: '/r' };
    const egress = { socketDir: '/s', socketName: 'proxy.sock', port: 3128, node: '/n/node' };
    const fast = bwrapArgs({ ...base, egress: { ...egress, perl: '/usr/bin/perl' } });
    expect(fast).toContain('--bind');
    expect(fast.slice(fast.indexOf('--') + 1)).toEqual(['/usr/bin/perl', '-e', EGRESS_LAUNCHER_PL, '--', '3128', '/n/node', EGRESS_FORWARDER_FD_JS, '/tmp/.conductor-egress/proxy.sock', '/bin/agent', '-p']);
    // a process limit keeps its shell in front of the launcher
    const limited = bwrapArgs({ ...base, maxProcesses: 64, egress: { ...egress, perl: '/usr/bin/perl' } });
    expect(limited.slice(limited.indexOf('--') + 1, limited.indexOf('--') + 5)).toEqual(['/bin/sh', '-c', 'ulimit -u 64 || exit 125; exec "$@"', 'sh']);
    const slow = bwrapArgs({ ...base, egress });
    const tail = slow.slice(slow.indexOf('--') + 1);
    expect(tail[2]).toContain('read r < "$f"');
    expect(tail.slice(3)).toEqual(['sh', '/n/node', EGRESS_FORWARDER_JS, '3128', '/tmp/.conductor-egress/proxy.sock', '/bin/agent', '-p']);
  });

  it('a bad sandbox mode or host entry is a config error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-cfg-'));
    try {
      writeFileSync(join(dir, 'a.yaml'), 'agents:\n  c:\n    type: claude\n    sandbox: docker\n');
      expect(() => loadConfig(join(dir, 'a.yaml'))).toThrow(/agents\.c\.sandbox:? must be one of none, bwrap, got "docker"/);
      writeFileSync(join(dir, 'b.yaml'), 'agents:\n  c:\n    type: claude\nsandbox:\n  allow_hosts: ["https://x.test/"]\n');
      expect(() => loadConfig(join(dir, 'b.yaml'))).toThrow(/sandbox\.allow_hosts(\.0|\[0\]):? must be a host or host:port/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('projects.<id>.sandbox: bad mode, bad project id or another key is a config error with its position', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-cfg-'));
    try {
      writeFileSync(join(dir, 'a.yaml'), 'agents:\n  c:\n    type: claude\nprojects:\n  web:\n    sandbox: docker\n');
      expect(() => loadConfig(join(dir, 'a.yaml'))).toThrow(/a\.yaml:6:\d+: projects\.web\.sandbox:? must be one of none, bwrap, got "docker"/);
      writeFileSync(join(dir, 'b.yaml'), 'agents:\n  c:\n    type: claude\nprojects:\n  web:\n    sandbox: bwrap\n    isolation: none\n');
      expect(() => loadConfig(join(dir, 'b.yaml'))).toThrow(/b\.yaml:7:\d+: projects\.web\.isolation:? unknown key/);
      writeFileSync(join(dir, 'c.yaml'), 'agents:\n  c:\n    type: claude\nprojects:\n  "../x":\n    sandbox: bwrap\n');
      expect(() => loadConfig(join(dir, 'c.yaml'))).toThrow(/not a valid project id/);
      writeFileSync(join(dir, 'd.yaml'), 'agents:\n  c:\n    type: claude\nprojects:\n  web:\n    sandbox: bwrap\n');
      expect(loadConfig(join(dir, 'd.yaml')).projects).toEqual({ web: { sandbox: 'bwrap' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sandbox mode: the agent, else defaults; a project can require bwrap but never lift it', () => {
    const config = (defaults?: SandboxMode, project?: SandboxMode) =>
      ({ defaults: { sandbox: defaults }, projects: { web: project ? { sandbox: project } : {} } }) as unknown as AppConfig;
    expect(sandboxModeFor(config(), {}, 'web')).toBe('none');
    expect(sandboxModeFor(config('bwrap'), {}, 'web')).toBe('bwrap');
    expect(sandboxModeFor(config('bwrap'), { sandbox: 'none' }, 'web')).toBe('none');
    expect(sandboxModeFor(config(undefined, 'bwrap'), { sandbox: 'none' }, 'web')).toBe('bwrap');
    expect(sandboxModeFor(config(undefined, 'bwrap'), { sandbox: 'none' }, 'other')).toBe('none');
    expect(sandboxModeFor(config('bwrap', 'none'), {}, 'web')).toBe('bwrap');
    expect(sandboxModeFor(config(undefined, 'none'), { sandbox: 'bwrap' }, 'web')).toBe('bwrap');
  });
});
