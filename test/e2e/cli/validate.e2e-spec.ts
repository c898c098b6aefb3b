import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../utils/cli';


function runAgent(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return runCli(args, { env, cwd });
}

describe('run-agent validate (built CLI)', () => {
  let tmp: string;
  let fakeBin: string;
  let env: NodeJS.ProcessEnv;
  let root: string;

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'validate-e2e-'));
    fakeBin = join(tmp, 'bin');
    mkdirSync(fakeBin);
    // Fake agent CLIs are real executables answering --version.
    writeFileSync(join(fakeBin, 'claude'), '#!/bin/sh\necho "2.1.50 (Claude Code)"\n');
    writeFileSync(join(fakeBin, 'gemini'), '#!/bin/sh\necho "gemini v0.9.1" >&2\nexit 0\n');
    chmodSync(join(fakeBin, 'claude'), 0o755);
    chmodSync(join(fakeBin, 'gemini'), 0o755);
    mkdirSync(join(tmp, 'home'));
    root = join(tmp, 'root');
    mkdirSync(root);
    env = { PATH: `${fakeBin}:/usr/bin:/bin`, HOME: join(tmp, 'home'), ANTHROPIC_API_KEY: 'sk-test' };
    writeFileSync(join(tmp, 'gem.token'), 'g\n');
    writeFileSync(
      join(tmp, 'config.yaml'),
      [
        'agents:',
        '  claude: {}',
        '  gem:',
        '    type: gemini',
        '    token_file: gem.token',
        '  pplx:',
        '    type: perplexity',
        '    token: p',
        '  script:',
        '    type: command',
        `    command: ${join(fakeBin, 'claude')}`,
        'defaults:',
        '  timeout: 60',
        `storage:`,
        `  runs_dir: ${root}`,
        '',
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('says why the sandbox cannot work here, and fails when an agent needs it (docs/sandbox.md)', async () => {
    const cfg = join(tmp, 'sandboxed.yaml');
    writeFileSync(cfg, `agents:\n  script:\n    type: command\n    command: ${join(fakeBin, 'claude')}\n    sandbox: bwrap\nstorage:\n  runs_dir: ${root}\n`);
    const res = await runAgent(['validate', '--config', cfg], { ...env, PATH: fakeBin }, tmp);
    expect(res.stdout).toContain('\nSandbox: FAIL (bwrap not found on PATH (install bubblewrap))\n');
    expect(res.code).toBe(1);
    const ok = await runAgent(['validate', '--config', cfg], env, tmp);
    expect(ok.stdout).toContain('\nSandbox: OK (bwrap /usr/bin/bwrap)\n');
    expect(ok.code).toBe(0);
  });

  it('reports config, root, agents with versions and token status; exits 1 on a warning', async () => {
    const res = await runAgent(['validate'], env, tmp);
    expect(res.stdout).toBe(
      [
        'Conductor Loop Configuration Validator',
        '',
        `Config: ${join(tmp, 'config.yaml')}`,
        `Root:   ${root}`,
        '',
        'Root: OK',
        '',
        'Agents:',
        '  ✓ claude       2.1.50     (CLI found, token: ANTHROPIC_API_KEY set)',
        '  ✗ gem          0.9.1      (CLI found, token: GEMINI_API_KEY not set)',
        '  ✓ pplx         (REST agent, token: token set)',
        '  ✓ script       (command found, token: not required)',
        '',
        'Validation: 3 OK, 1 WARNING',
        '',
        'Sandbox: OK (bwrap /usr/bin/bwrap)',
        '',
      ].join('\n'),
    );
    expect(res.stderr).toBe('Error: validation completed with warnings\n');
    expect(res.code).toBe(1);
    expect(readdirSync(root)).toEqual([]); // the write probe was removed
  });

  it('passes (exit 0) when every checked agent is fine, and checks token files with --check-tokens', async () => {
    const ok = await runAgent(['validate', '--agent', 'claude'], env, tmp);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('Validation: 1 OK, 0 WARNING\n');
    const tokens = await runAgent(['validate', '--agent', 'gem', '--check-tokens'], env, tmp);
    expect(tokens.code).toBe(0);
    expect(tokens.stdout).toContain('  ✓ gem          0.9.1      (CLI found)\n');
    expect(tokens.stdout).toContain(`Token checks:\n  Agent gem:           token_file ${join(tmp, 'gem.token')} [OK]\n`);
  });

  it('flags a missing CLI, an unknown --agent, a missing root, and a broken config', async () => {
    writeFileSync(join(tmp, 'codex.yaml'), 'agents:\n  codex: {}\ndefaults:\n  timeout: 1\n');
    const missing = await runAgent(['validate', '--config', 'codex.yaml', '--root', join(tmp, 'absent')], env, tmp);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('Root: FAIL (directory not found: ');
    expect(missing.stdout).toContain('  ✗ codex        (CLI "codex" not found in PATH, token: OPENAI_API_KEY not set)\n');
    const ghost = await runAgent(['validate', '--agent', 'ghost'], env, tmp);
    expect(ghost.code).toBe(1);
    expect(ghost.stdout).toContain('Agents: (agent "ghost" not found in config)\n');
    writeFileSync(join(tmp, 'broken.yaml'), 'agents: [\n');
    const broken = await runAgent(['validate', '--config', 'broken.yaml'], env, tmp);
    expect(broken.code).toBe(2);
    const line = `${join(tmp, 'broken.yaml')}:2:1: agents: YAML syntax error: `;
    expect(broken.stdout).toContain(`Config: FAIL\n  ${line}`);
    expect(broken.stdout).toContain('\n\nAgents: (no config loaded)\n');
    expect(broken.stderr).toMatch(new RegExp(`^Error: ${line.replace(/[.[\]]/g, '\\$&')}[^\n]+\n$`));
  });

  it('--config naming a missing file is a usage error, not "completed with warnings"', async () => {
    const res = await runAgent(['validate', '--config', join(tmp, 'missing.yaml')], env, tmp);
    expect(res).toEqual({ code: 2, signal: null, stdout: '', stderr: `Error: config file not found: ${join(tmp, 'missing.yaml')}\n` });
  });

  it('works without any config and never creates the home config', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const res = await runAgent(['validate', '--check-network'], env, empty);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Config: (not found)\n');
    expect(res.stdout).toContain(`Root:   ${join(tmp, 'home', '.run-agent', 'runs')}\n\nRoot: not created yet`);
    expect(res.stdout).toContain('Agents: (no config loaded)\n');
    expect(res.stdout).not.toContain('Network checks:');
    expect(readdirSync(join(tmp, 'home'))).toEqual([]);
  });

  it('explains every flag in --help', async () => {
    const help = await runAgent(['validate', '--help'], env, tmp);
    expect(help.code).toBe(0);
    for (const flag of ['--config', '--root', '--agent', '--check-network', '--check-tokens']) expect(help.stdout).toContain(flag);
  });
  it('--check-network reports whether each REST agent endpoint answers HTTP', async () => {
    const server: Server = createServer((_req, res) => res.writeHead(405).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    try {
      const dir = mkdtempSync(join(tmp, 'net-'));
      writeFileSync(
        join(dir, 'config.yaml'),
        ['agents:', '  up:', '    type: perplexity', '    token: p', `    base_url: http://127.0.0.1:${port}/chat/completions`,
          '  down:', '    type: xai', '    token: x', `    base_url: http://127.0.0.1:${closedPort}`, `storage:`, `  runs_dir: ${root}`, ''].join('\n'),
      );
      const r = await runAgent(['validate', '--check-network'], env, dir);
      expect(r.stdout).toContain(`Agent ${'up:'.padEnd(14)} http://127.0.0.1:${port}/chat/completions reachable`);
      expect(r.stdout).toContain(`Agent ${'down:'.padEnd(14)} http://127.0.0.1:${closedPort}/v1/chat/completions UNREACHABLE (ECONNREFUSED)`);
      expect(r.code).toBe(1);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
