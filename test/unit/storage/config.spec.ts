import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  defaultRunsRoot,
  findConfigFile,
  formatGoDuration,
  loadConfig,
  parseGoDuration,
  resolveRunsRoot,
  StorageError,
} from '@app/storage';
import { makeTempDir } from './helpers/temp';

describe('config loading', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    tmp = makeTempDir('storage-config-');
    mkdirSync(join(tmp.dir, 'home'));
    env = { HOME: join(tmp.dir, 'home') };
  });
  afterEach(() => tmp.cleanup());

  function write(name: string, text: string): string {
    const path = join(tmp.dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  function loadError(path: string, opts: { strict?: boolean } = {}): StorageError {
    try {
      loadConfig(path, { env, ...opts });
    } catch (err) {
      expect(err).toBeInstanceOf(StorageError);
      expect((err as StorageError).code).toBe('INVALID_CONFIG');
      return err as StorageError;
    }
    throw new Error('expected INVALID_CONFIG');
  }

  const minimal = 'agents:\n  claude: {}\ndefaults:\n  timeout: 300\n';

  it('loads a full YAML config with defaults, normalised types and resolved paths', () => {
    write('secrets/codex.token', '  sk-codex \n');
    const path = write(
      'cfg/config.yaml',
      [
        'agents:',
        '  claude: {}',
        '  Codex-Main:',
        '    type: " CODEX "',
        '    token_file: ../secrets/codex.token',
        '  pplx:',
        '    type: perplexity',
        '    token: inline',
        '    base_url: https://api.example.test',
        '    model: sonar',
        '  script:',
        '    type: command',
        '    command: /usr/bin/env',
        '    args: [bash, -c, "cat"]',
        '    timeout: 5   # unknown keys are ignored',
        'defaults:',
        '  agent: claude',
        '  timeout: 300',
        '  max_concurrent_runs: 2',
        '  diversification:',
        '    enabled: true',
        '    strategy: weighted',
        '    agents: [claude, pplx]',
        '    weights: [3, 1]',
        '    fallback_on_failure: true',
        'api:',
        '  port: 8080',
        '  cors_origins: ["http://localhost:3000"]',
        '  max_request_body_bytes: 2097152',
        '  sse:',
        '    poll_interval_ms: 0',
        '    heartbeat_interval_s: 5',
        'storage:',
        '  runs_dir: ./runs',
        '  extra_roots: [~/legacy]',
        '  max_message_body_bytes: 33554432',
        'webhook:',
        '  url: https://hooks.example.test/x',
        '  events: [run_stop]',
        '  secret: s3',
        '  timeout: 1m30s',
        '',
      ].join('\n'),
    );
    const cfg = loadConfig(path, { env });
    expect(cfg.path).toBe(path);
    expect(Object.keys(cfg.agents)).toEqual(['Codex-Main', 'claude', 'pplx', 'script']);
    expect(cfg.agents.claude).toEqual({ name: 'claude', type: 'claude' });
    expect(cfg.agents['Codex-Main']).toEqual({
      name: 'Codex-Main',
      type: 'codex',
      token_file: join(tmp.dir, 'secrets', 'codex.token'),
      token: 'sk-codex',
    });
    expect(cfg.agents.pplx).toMatchObject({ type: 'perplexity', token: 'inline', base_url: 'https://api.example.test', model: 'sonar' });
    expect(cfg.agents.script).toEqual({ name: 'script', type: 'command', command: '/usr/bin/env', args: ['bash', '-c', 'cat'] });
    expect(cfg.defaults).toEqual({
      agent: 'claude',
      timeout: 300,
      max_concurrent_runs: 2,
      max_concurrent_root_tasks: 0,
      diversification: { enabled: true, strategy: 'weighted', agents: ['claude', 'pplx'], weights: [3, 1], fallback_on_failure: true },
    });
    expect(cfg.api).toEqual({
      host: '127.0.0.1',
      port: 8080,
      cors_origins: ['http://localhost:3000'],
      allowed_hosts: [],
      auth_enabled: false,
      api_key: '',
      metrics_public: false,
      sse: { poll_interval_ms: 500, discovery_interval_ms: 1000, heartbeat_interval_s: 5, max_clients_per_run: 10 },
      max_request_body_bytes: 2097152,
      log_level: '',
    });
    expect(cfg.storage).toEqual({ runs_dir: join(tmp.dir, 'cfg', 'runs'), extra_roots: [join(tmp.dir, 'home', 'legacy')], max_message_body_bytes: 33554432 });
    expect(cfg.webhook).toEqual({ url: 'https://hooks.example.test/x', events: ['run_stop'], secret: 's3', standard_webhooks_secret: '', timeout: '1m30s', timeoutMs: 90_000 });
  });

  it('applies CONDUCTOR_AGENT_<NAME>_TOKEN (replacing token_file) and CONDUCTOR_API_KEY', () => {
    const path = write('config.yaml', 'agents:\n  my-claude:\n    type: claude\n    token_file: /nonexistent/file\ndefaults:\n  timeout: 1\n');
    env.CONDUCTOR_AGENT_MY_CLAUDE_TOKEN = ' from-env ';
    env.CONDUCTOR_API_KEY = 'k3y';
    const cfg = loadConfig(path, { env });
    expect(cfg.agents['my-claude']).toEqual({ name: 'my-claude', type: 'claude', token: 'from-env' });
    expect(cfg.api).toMatchObject({ api_key: 'k3y', auth_enabled: true });
  });

  it('expands ~ in token_file and reports an empty token file', () => {
    writeFileSync(join(tmp.dir, 'home', 'tok'), '\n');
    const path = write('config.yaml', 'agents:\n  claude:\n    token_file: ~/tok\ndefaults:\n  timeout: 1\n');
    expect(loadError(path).message).toBe(
      `${path}:3:5: agents.claude.token_file: read token_file for agent "claude": token file is empty: ${join(tmp.dir, 'home', 'tok')}`,
    );
    // Lenient loads neither validate nor read token files.
    expect(loadConfig(path, { env, strict: false }).agents.claude).toEqual({ name: 'claude', type: 'claude', token_file: join(tmp.dir, 'home', 'tok') });
  });

  it.each([
    ['defaults:\n  timeout: 1\n', 'no agents configured'],
    ['agents:\n  claude: {}\ndefaults:\n  timeout: -5\n', 'defaults.timeout must be positive'],
    ['agents:\n  claude: {}\nstorage:\n  max_message_body_bytes: -1\n', 'storage.max_message_body_bytes must not be negative'],
    ['agents:\n  claude: {}\napi:\n  max_request_body_bytes: -1\n', 'api.max_request_body_bytes must not be negative'],
    [`${minimal}  max_concurrent_root_tasks: -1\n`, 'defaults.max_concurrent_root_tasks must be non-negative'],
    [`${minimal}api:\n  sse:\n    max_clients_per_run: -2\n`, 'api.sse.max_clients_per_run must be non-negative'],
    ['agents:\n  robot:\n    type: robot\ndefaults:\n  timeout: 1\n', 'agent "robot" has invalid type "robot"'],
    ['agents:\n  claude:\n    token: a\n    token_file: /x\ndefaults:\n  timeout: 1\n', 'agent "claude" cannot set both token and token_file'],
    ['agents:\n  claude:\n    token_file: /nonexistent/tok\ndefaults:\n  timeout: 1\n', 'agent "claude" token_file "/nonexistent/tok": stat /nonexistent/tok: no such file or directory'],
    ['agents:\n  claude:\n    token_file: /tmp\ndefaults:\n  timeout: 1\n', 'agent "claude" token_file "/tmp": not a regular file'],
    ['agents:\n  x:\n    type: command\ndefaults:\n  timeout: 1\n', 'agent "x" of type "command" needs a command'],
    [`${minimal}api:\n  port: 70000\n`, 'api.port must be between 0 and 65535'],
    [`${minimal}webhook:\n  url: "not a url"\n`, 'webhook.url is invalid: parse "not a url": invalid URI for request'],
    [`${minimal}webhook:\n  timeout: soon\n`, 'webhook.timeout is invalid: time: invalid duration "soon"'],
    [`${minimal}  diversification:\n    strategy: random\n`, 'defaults.diversification.strategy "random" is invalid; valid values: round-robin, weighted'],
    [`${minimal}  diversification:\n    agents: [""]\n`, 'defaults.diversification.agents[0] is empty'],
    [`${minimal}  diversification:\n    agents: [claude, ghost]\n`, 'defaults.diversification.agents[1] "ghost" not found in agents map'],
    [`${minimal}  diversification:\n    agents: [claude]\n    weights: [1, 2]\n`, 'defaults.diversification.weights length (2) must match agents length (1)'],
    [`${minimal}  diversification:\n    agents: [claude]\n    weights: [0]\n`, 'defaults.diversification.weights[0] must be positive, got 0'],
    ['agents:\n  claude:\n    token_file: ~bob/tok\ndefaults:\n  timeout: 1\n', 'resolve token_file for agent "claude": unsupported home expansion: "~bob/tok"'],
  ])('strict validation of %j fails with the upstream message', (text, message) => {
    const path = write('config.yaml', text);
    // `<file>[:line:col]: [key: ]<upstream message, without the key it starts with>`
    const got = loadError(path).message;
    const m = /^(.*?)(?::\d+:\d+)?: (?:([\w.[\]]+): )?(.*)$/.exec(got)!;
    expect(m[1]).toBe(path);
    expect(m[2] && message.startsWith(`${m[2]} `) ? `${m[2]} ${m[3]}` : m[3]).toBe(message);
  });

  it('reports malformed YAML and wrong value types as file:line:col: key: problem', () => {
    const broken = write('broken.yaml', 'agents:\n  claude: {}\ndefaults:\n  timeout: [1\n');
    expect(loadError(broken).message).toMatch(new RegExp(`^${broken}:5:1: defaults\\.timeout: YAML syntax error: .+`));
    expect(loadError(broken).message).not.toContain('\n');
    const typed = write('typed.yaml', 'agents:\n  claude: {}\ndefaults:\n  timeout: soon\n');
    expect(loadError(typed, { strict: false }).message).toBe(`${typed}:4:3: defaults.timeout: must be an integer, got "soon"`);
    const dup = write('tabs.yaml', 'agents:\n\tclaude: {}\n');
    expect(loadError(dup).message).toMatch(new RegExp(`^${dup}:2:1: agents: YAML syntax error: Tabs`));
    const list = write('list.yaml', '- a\n- b\n');
    expect(loadError(list, { strict: false }).message).toBe(`${list}:1:1: the top level must be a mapping`);
  });

  it('a lenient load (server, root lookup) validates values and names the key and line, but needs no agents', () => {
    const port = write('port.yaml', 'api:\n  api_key: secret\n  port: 70000\n');
    expect(loadError(port, { strict: false }).message).toBe(`${port}:3:3: api.port: must be between 0 and 65535`);
    const robot = write('robot.yaml', 'api:\n  api_key: secret\nagents:\n  robot:\n    type: robot\n');
    expect(loadError(robot, { strict: false }).message).toBe(`${robot}:5:5: agents.robot.type: agent "robot" has invalid type "robot"`);
    const syntax = write('syntax.yaml', 'api:\n  api_key: secret\nagents:\n  claude: {type: claude\ndefaults:\n  timeout: 1\n');
    expect(loadError(syntax, { strict: false }).message).toMatch(new RegExp(`^${syntax}:5:1: agents\\.claude(\\.\\w+)?: YAML syntax error: `));
    const none = write('none.yaml', 'api:\n  api_key: secret\n');
    expect(loadConfig(none, { env, strict: false }).api.api_key).toBe('secret');
    expect(loadError(none).message).toBe(`${none}: agents: no agents configured`);
  });

  it('reads the HCL subset', () => {
    write('tok', 'hcl-token\n');
    const path = write(
      'conductor-loop.hcl',
      [
        '# comment',
        '// another',
        'claude {',
        '  token_file = "tok"',
        '}',
        'fast {',
        '  type = codex',
        '  token = "a \\"quoted\\" token"',
        '}',
        'runner {',
        '  type = command',
        '  command = /bin/cat',
        '}',
        'defaults {',
        '  agent = "claude"',
        '  timeout = 300',
        '  max_concurrent_runs = 4',
        '}',
        'api {',
        '  host = "127.0.0.1"',
        '  port = 9999',
        '}',
        'storage {',
        '  runs_dir = "~/runs"',
        '}',
        '',
      ].join('\n'),
    );
    const cfg = loadConfig(path, { env });
    expect(cfg.agents.claude).toEqual({ name: 'claude', type: 'claude', token_file: join(tmp.dir, 'tok'), token: 'hcl-token' });
    expect(cfg.agents.fast).toEqual({ name: 'fast', type: 'codex', token: 'a "quoted" token' });
    expect(cfg.agents.runner).toEqual({ name: 'runner', type: 'command', command: '/bin/cat' });
    expect(cfg.defaults).toMatchObject({ agent: 'claude', timeout: 300, max_concurrent_runs: 4 });
    expect(cfg.api).toMatchObject({ host: '127.0.0.1', port: 9999 });
    expect(cfg.storage.runs_dir).toBe(join(tmp.dir, 'home', 'runs'));
  });

  it.each([
    ['claude {\n  type = claude\n', 'unexpected end of file: block "claude" not closed'],
    ['claude\n', 'line 1: expected block open (name {), got: "claude"'],
    ['\n\n{\n}\n', 'line 3: empty block name'],
    ['my agent {\n}\n', 'line 1: block name "my agent" must not contain spaces'],
    ['claude {\n  just words\n}\n', 'line 2: expected key = value, got: "just words"'],
    ['agents {\n  claude {\n', 'line 2: expected key = value, got: "claude {"'],
    ['defaults {\n  timeout = 300  # five minutes\n}\n', 'defaults block: timeout: strconv.Atoi: parsing "300  # five minutes": invalid syntax'],
  ])('HCL error for %j', (text, message) => {
    const path = write('c.hcl', text);
    expect(loadError(path, { strict: false }).message).toBe(`${path}: ${message}`);
  });

  it('finds ./config.yaml, then ./config.yml, then the home HCL, and never creates files', () => {
    const cwd = join(tmp.dir, 'work');
    mkdirSync(cwd);
    expect(findConfigFile(cwd, env)).toBeUndefined();
    expect(readdirSync(join(tmp.dir, 'home'))).toEqual([]);
    mkdirSync(join(tmp.dir, 'home', '.run-agent'));
    writeFileSync(join(tmp.dir, 'home', '.run-agent', 'conductor-loop.hcl'), '');
    expect(findConfigFile(cwd, env)).toBe(join(tmp.dir, 'home', '.run-agent', 'conductor-loop.hcl'));
    writeFileSync(join(cwd, 'config.yml'), minimal);
    expect(findConfigFile(cwd, env)).toBe(join(cwd, 'config.yml'));
    writeFileSync(join(cwd, 'config.yaml'), minimal);
    expect(findConfigFile(cwd, env)).toBe(join(cwd, 'config.yaml'));
    writeFileSync(join(cwd, 'config.hcl'), '');
    expect(findConfigFile(cwd, env)).toBe(join(cwd, 'config.yaml'));
  });

  it('refuses a missing config file without creating it', () => {
    const path = join(tmp.dir, 'none.yaml');
    expect(loadError(path).message).toMatch(new RegExp(`^${path}: read config: ENOENT`));
    expect(existsSync(path)).toBe(false);
  });

  it('reports an unreadable token file in strict mode (a directory: unreadable for root too)', () => {
    mkdirSync(join(tmp.dir, 'tok-dir'));
    const path = write('config.yaml', `agents:\n  claude:\n    token_file: ${join(tmp.dir, 'tok-dir')}\ndefaults:\n  timeout: 1\n`);
    expect(loadError(path).message).toBe(`${path}:3:5: agents.claude.token_file: agent "claude" token_file "${join(tmp.dir, 'tok-dir')}": not a regular file`);
  });

  it('a token file without read permission: an error for a normal user, read by root (CI runs as root)', () => {
    write('tok', 'x\n');
    chmodSync(join(tmp.dir, 'tok'), 0o000);
    const path = write('config.yaml', `agents:\n  claude:\n    token_file: ${join(tmp.dir, 'tok')}\ndefaults:\n  timeout: 1\n`);
    if (process.getuid?.() === 0) expect(loadConfig(path).agents.claude.token).toBe('x');
    else expect(loadError(path).message).toMatch(/token_file .*EACCES/);
  });
});

describe('runs root resolution (D8)', () => {
  const home = '/home/tester';
  const config = { storage: { runs_dir: '/from/config', extra_roots: [] } } as never;

  it('prefers --root, then CONDUCTOR_ROOT, then RUN_AGENT_ROOT, then storage.runs_dir, then ~/.run-agent/runs', () => {
    const env = { HOME: home, CONDUCTOR_ROOT: '/env/conductor', RUN_AGENT_ROOT: '/env/run-agent' };
    expect(resolveRunsRoot({ flag: '/flag', env, config })).toBe('/flag');
    expect(resolveRunsRoot({ env, config })).toBe('/env/conductor');
    expect(resolveRunsRoot({ env: { HOME: home, RUN_AGENT_ROOT: '/env/run-agent' }, config })).toBe('/env/run-agent');
    expect(resolveRunsRoot({ env: { HOME: home }, config })).toBe('/from/config');
    expect(resolveRunsRoot({ env: { HOME: home } })).toBe('/home/tester/.run-agent/runs');
    expect(defaultRunsRoot({ HOME: home })).toBe('/home/tester/.run-agent/runs');
  });

  it('makes relative and ~ roots absolute', () => {
    expect(resolveRunsRoot({ flag: 'runs', env: { HOME: home }, cwd: '/work' })).toBe('/work/runs');
    expect(resolveRunsRoot({ flag: '~/r', env: { HOME: home } })).toBe('/home/tester/r');
    expect(resolveRunsRoot({ flag: '  ', env: { HOME: home, CONDUCTOR_ROOT: ' ' } })).toBe('/home/tester/.run-agent/runs');
  });
});

describe('Go durations', () => {
  it.each([
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['250ms', 250],
    ['0', 0],
    ['-2m', -120_000],
  ])('parses %s', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '10', '1d', 'm'])('rejects %j', (text) => {
    expect(() => parseGoDuration(text)).toThrow('time: invalid duration');
  });

  it.each([
    [0, '0s'],
    [1_000, '1s'],
    [90_000, '1m30s'],
    [1_200_000, '20m0s'],
    [3_600_000, '1h0m0s'],
    [1_500, '1.5s'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
  });
});
