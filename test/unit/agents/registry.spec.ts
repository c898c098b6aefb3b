import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentError,
  AgentRegistry,
  CLI_AGENT_ARGS,
  checkGeminiStreamJson,
  detectCliVersion,
  findExecutable,
  isFatalAgentError,
  isVersionAtLeast,
  selectAgentConfig,
} from '@app/agents';
import { envWithFakeAgents, fakeAgentPath, fakeAgentsBinDir } from '../../utils/fake-agents';

async function rejection(p: Promise<unknown>): Promise<AgentError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  return err as AgentError;
}

describe('AgentRegistry.resolve', () => {
  const registry = new AgentRegistry();
  const env = envWithFakeAgents();
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'agents-registry-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['claude', 'codex', 'gemini'] as const)('builds the upstream %s command', async (type) => {
    const spec = await registry.resolve({ type }, { env, name: `my-${type}` });
    expect(spec).toMatchObject({ kind: 'cli', name: `my-${type}`, type, command: type, resolvedPath: fakeAgentPath(type) });
    expect(spec.kind === 'cli' && spec.args).toEqual(CLI_AGENT_ARGS[type]);
  });

  it('records the commandline as upstream does', async () => {
    const spec = await registry.resolve({ type: 'codex' }, { env });
    expect(spec.kind).toBe('cli');
    if (spec.kind === 'cli') {
      expect(registry.commandLine(spec, '/r/prompt.md')).toBe('codex exec --dangerously-bypass-approvals-and-sandbox --json - < /r/prompt.md');
    }
  });

  it('lower-cases and trims the type', async () => {
    const spec = await registry.resolve({ type: ' Claude ' }, { env });
    expect(spec.type).toBe('claude');
  });

  it('fails fatally with UNSUPPORTED for an unknown type', async () => {
    const err = await rejection(registry.resolve({ type: 'copilot' }, { env }));
    expect(err.code).toBe('UNSUPPORTED');
    expect(err.message).toBe('unsupported agent type "copilot"');
    expect(isFatalAgentError(err)).toBe(true);
  });

  it('fails fatally with BINARY_NOT_FOUND when the CLI is not on PATH', async () => {
    const err = await rejection(registry.resolve({ type: 'claude' }, { env: { PATH: dir } }));
    expect(err.code).toBe('BINARY_NOT_FOUND');
    expect(err.message).toBe('agent cli "claude" not found in PATH');
    expect(isFatalAgentError(err)).toBe(true);
  });

  it('fails fatally with NOT_EXECUTABLE when the only candidate lacks the execute bit', async () => {
    const file = join(dir, 'codex');
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    chmodSync(file, 0o644);
    const err = await rejection(registry.resolve({ type: 'codex' }, { env: { PATH: dir } }));
    expect(err.code).toBe('NOT_EXECUTABLE');
    expect(err.message).toContain('permission denied');
    expect(isFatalAgentError(err)).toBe(true);
  });

  it('skips a non-executable candidate when a later PATH entry has an executable one', () => {
    writeFileSync(join(dir, 'claude'), 'not executable');
    chmodSync(join(dir, 'claude'), 0o644);
    mkdirSync(join(dir, 'gemini')); // a folder is no candidate either
    expect(findExecutable('claude', { PATH: `${dir}:${fakeAgentsBinDir()}` })).toBe(fakeAgentPath('claude'));
  });

  it('reports a missing gemini with the upstream hint', async () => {
    const err = await rejection(registry.resolve({ type: 'gemini' }, { env: { PATH: dir } }));
    expect(err.code).toBe('BINARY_NOT_FOUND');
    expect(err.message).toMatch(/^gemini CLI not found or failed to run \(install from https:\/\/github.com\/google-gemini\/gemini-cli\)/);
  });

  it('rejects a gemini whose --help lacks --output-format, probing once per binary', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const counter = join(dir, 'help-calls');
    // A wrapper around the fake gemini that counts --help calls and hides stream-json support.
    writeFileSync(
      join(bin, 'gemini'),
      `#!/bin/sh\nif [ "$1" = "--help" ]; then echo x >> '${counter}'; fi\nFAKE_AGENT_HELP_NO_STREAM_JSON=1 exec '${fakeAgentPath('gemini')}' "$@"\n`,
    );
    chmodSync(join(bin, 'gemini'), 0o755);
    const oldEnv = envWithFakeAgents({ PATH: `${bin}:${process.env.PATH}` });
    const err = await rejection(registry.resolve({ type: 'gemini' }, { env: oldEnv }));
    expect(err.code).toBe('UNSUPPORTED');
    expect(err.message).toMatch(/^installed Gemini CLI does not support --output-format stream-json; please update/);
    await rejection(checkGeminiStreamJson(join(bin, 'gemini'), oldEnv));
    expect(readFileSync(counter, 'utf8')).toBe('x\n');
  });

  it('builds a command agent from config command and args (D17)', async () => {
    const spec = await registry.resolve({ name: 'scripted', type: 'command', command: 'fake-command-agent', args: ['--mode', 'fast'] }, { env });
    expect(spec).toMatchObject({ kind: 'cli', type: 'command', name: 'scripted', command: 'fake-command-agent', resolvedPath: fakeAgentPath('fake-command-agent'), args: ['--mode', 'fast'] });
    expect(spec.kind === 'cli' && spec.tokenEnvVar).toBeUndefined();
    const relative = await registry.resolve({ type: 'command', command: './fake-command-agent' }, { env, cwd: fakeAgentsBinDir() });
    expect(relative.kind === 'cli' && relative.resolvedPath).toBe(fakeAgentPath('fake-command-agent'));
  });

  it('refuses a command agent without a command', async () => {
    const err = await rejection(registry.resolve({ name: 'broken', type: 'command' }, { env }));
    expect(err.code).toBe('INVALID_CONFIG');
    expect(err.message).toBe('agent "broken" of type command has no command');
    expect(isFatalAgentError(err)).toBe(true);
  });

  it('builds REST specs bound to the config entry', async () => {
    const spec = await registry.resolve({ type: 'perplexity', model: 'sonar-pro', base_url: 'http://127.0.0.1:1/x', token: 't' });
    expect(spec).toMatchObject({ kind: 'rest', type: 'perplexity', tokenEnvVar: 'PERPLEXITY_API_KEY', config: { model: 'sonar-pro', base_url: 'http://127.0.0.1:1/x', token: 't' } });
    const xai = await registry.resolve({ type: 'xai' });
    expect(xai).toMatchObject({ kind: 'rest', type: 'xai', tokenEnvVar: 'XAI_API_KEY' });
  });
});

describe('version detection', () => {
  const registry = new AgentRegistry();
  const env = envWithFakeAgents();

  it.each([
    ['claude', '2.0.0 (Claude Code)'],
    ['codex', 'codex-cli 0.50.0'],
    ['gemini', '0.12.0'],
  ] as const)('reads `%s --version`', async (type, version) => {
    const spec = await registry.resolve({ type }, { env });
    await expect(registry.detectVersion(spec, env)).resolves.toBe(version);
  });

  it('is empty for REST and command agents', async () => {
    await expect(registry.detectVersion(await registry.resolve({ type: 'xai' }))).resolves.toBe('');
    await expect(registry.detectVersion(await registry.resolve({ type: 'command', command: 'fake-command-agent' }, { env }), env)).resolves.toBe('');
  });

  it('falls back to stderr, and gives an empty string on failure or timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-version-'));
    try {
      const script = (name: string, body: string) => {
        writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
        chmodSync(join(dir, name), 0o755);
        return join(dir, name);
      };
      await expect(detectCliVersion(script('stderr-only', 'echo "  tool 1.2.3  " >&2'))).resolves.toBe('tool 1.2.3');
      await expect(detectCliVersion(script('failing', 'echo 9.9.9; exit 3'))).resolves.toBe('');
      // The budget running out is the behaviour under test, so a short one is right here.
      await expect(detectCliVersion(script('hanging', 'exec sleep 30'), { timeoutMs: 200 })).resolves.toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compares versions against the minimum', () => {
    expect(isVersionAtLeast('2.0.0 (Claude Code)', '1.0.0')).toBe(true);
    expect(isVersionAtLeast('claude 0.9.12', '1.0.0')).toBe(false);
    expect(isVersionAtLeast('codex-cli 0.1.0', '0.1.0')).toBe(true);
    expect(isVersionAtLeast('v0.0.9', '0.1.0')).toBe(false);
    expect(isVersionAtLeast('unknown', '1.0.0')).toBe(true);
  });
});

describe('selectAgentConfig', () => {
  const config = {
    agents: {
      zed: { type: 'codex', token: 'z' },
      alpha: { type: 'claude' },
      beta: { type: 'CLAUDE' },
    },
    defaults: {},
  };

  it('picks an exact name, then the first agent (by name) of that type', () => {
    expect(selectAgentConfig(config, 'zed')).toMatchObject({ name: 'zed', type: 'codex', config: { token: 'z' } });
    expect(selectAgentConfig(config, 'claude')).toMatchObject({ name: 'alpha', type: 'claude' });
    expect(selectAgentConfig(config, 'CODEX')).toMatchObject({ name: 'zed' });
  });

  it('falls back to defaults.agent, then to the alphabetically first agent', () => {
    expect(selectAgentConfig({ ...config, defaults: { agent: 'zed' } })).toMatchObject({ name: 'zed' });
    expect(selectAgentConfig(config)).toMatchObject({ name: 'alpha' });
  });

  it('uses the lower-cased value as the type without a config', () => {
    expect(selectAgentConfig(undefined, 'Gemini')).toMatchObject({ name: 'Gemini', type: 'gemini' });
  });

  it('reports upstream errors with fatal codes', () => {
    const cases: [() => unknown, string, string][] = [
      [() => selectAgentConfig(config, 'nope'), 'UNKNOWN_AGENT', 'unknown agent "nope"'],
      [() => selectAgentConfig({ agents: {} }), 'INVALID_CONFIG', 'no agents configured'],
      [() => selectAgentConfig(undefined, ' '), 'INVALID_CONFIG', 'no config found: create config.yaml (see README) or pass --config, or name an agent type with --agent'],
    ];
    for (const [fn, code, message] of cases) {
      let caught: unknown;
      try {
        fn();
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(AgentError);
      expect(caught).toMatchObject({ code, message });
      expect(isFatalAgentError(caught)).toBe(true);
    }
  });
});

describe('isFatalAgentError', () => {
  it('treats transient transport and stream failures and foreign errors as non-fatal', () => {
    expect(isFatalAgentError(new AgentError('HTTP', 'status 503'))).toBe(false);
    expect(isFatalAgentError(new AgentError('STREAM', 'idle'))).toBe(false);
    expect(isFatalAgentError(new Error('boom'))).toBe(false);
    expect(isFatalAgentError(new AgentError('AUTH', '401'))).toBe(true);
    expect(isFatalAgentError(new AgentError('QUOTA', 'quota'))).toBe(true);
  });
});

describe('AgentsModule', () => {
  it('provides an injectable AgentRegistry', async () => {
    const { Test } = await import('@nestjs/testing');
    const { AgentsModule } = await import('@app/agents');
    const moduleRef = await Test.createTestingModule({ imports: [AgentsModule] }).compile();
    const registry = moduleRef.get(AgentRegistry);
    expect(registry).toBeInstanceOf(AgentRegistry);
    await expect(registry.resolve({ type: 'nope' })).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    await moduleRef.close();
  });
});
