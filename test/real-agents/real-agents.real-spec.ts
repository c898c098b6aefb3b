// The real claude, codex and gemini CLIs, run exactly as the runner runs them (upstream flags,
// prompt on stdin, stdout/stderr to the run files, own session), against FakeModelServer on
// 127.0.0.1. Each conversation makes one shell tool call (`cat TASK.md`) and then answers.
// Set REAL_AGENTS_CAPTURE=1 to refresh test/fixtures/agents/captured/*.jsonl from these runs.
import { execFile, spawn } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { AgentRegistry, buildAgentEnv, CliAgentSpec, extractOutput } from '@app/agents';
import { FakeModelServer } from './fake-model-server';

const BIN = process.env.REAL_AGENTS_BIN ?? '/tmp/real-agents/node_modules/.bin';
const RUN_AGENT = join(__dirname, '..', '..', 'bin', 'run-agent');
const CAPTURED = join(__dirname, '..', 'fixtures', 'agents', 'captured');
const ANSWER = 'Implemented X.  Two spaces survive, and so does a trailing one ';
const TYPES = ['claude', 'codex', 'gemini'] as const;
type CliType = (typeof TYPES)[number];

/** Variables that point each CLI at the fake server and keep it off the network. */
function offlineEnv(type: CliType, url: string, home: string): Record<string, string> {
  switch (type) {
    case 'claude':
      return {
        ANTHROPIC_BASE_URL: url,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        // claude refuses bypassPermissions as root unless it is told it runs in a sandbox.
        ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
      };
    case 'codex': {
      const codexHome = join(home, '.codex');
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(
        join(codexHome, 'config.toml'),
        `model = "fake-model"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\nbase_url = "${url}/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n`,
      );
      return { CODEX_HOME: codexHome };
    }
    case 'gemini':
      mkdirSync(join(home, '.gemini'), { recursive: true });
      // With GOOGLE_GEMINI_BASE_URL alone gemini picks the "gateway" auth type and then rejects it.
      writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
      return { GOOGLE_GEMINI_BASE_URL: url, GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  }
}

function runAgent(spec: CliAgentSpec, runDir: string, cwd: string, env: Record<string, string>): Promise<number | null> {
  const fds = [openSync(join(runDir, 'prompt.md'), 'r'), openSync(join(runDir, 'agent-stdout.txt'), 'a'), openSync(join(runDir, 'agent-stderr.txt'), 'a')];
  const child = spawn(spec.resolvedPath, spec.args, { cwd, env, detached: true, stdio: fds });
  fds.forEach((fd) => closeSync(fd));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe.each(TYPES)('real %s CLI against a fake model server', (type) => {
  let server: FakeModelServer;
  let root: string;

  beforeAll(async () => {
    if (!existsSync(join(BIN, type))) {
      throw new Error(`${type} is not installed in ${BIN}: npm install --prefix /tmp/real-agents @anthropic-ai/claude-code @openai/codex @google/gemini-cli`);
    }
    server = new FakeModelServer(ANSWER, 'cat TASK.md');
    await server.start();
  });
  afterAll(async () => {
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('runs with the upstream flags and its stream parses to the model answer', async () => {
    root = mkdtempSync(join(tmpdir(), `real-${type}-`));
    const home = join(root, 'home');
    const task = join(root, 'task');
    const run = join(task, 'runs', 'run-1');
    mkdirSync(home);
    mkdirSync(run, { recursive: true });
    writeFileSync(join(task, 'TASK.md'), 'Implement X\n');
    writeFileSync(join(run, 'prompt.md'), 'Read TASK.md and do it.\n');

    const base = { PATH: [BIN, ...(process.env.PATH ?? '').split(delimiter)].join(delimiter), HOME: home, TERM: 'dumb', LANG: 'C.UTF-8' };
    const env = buildAgentEnv({
      agentType: type,
      base: { ...base, CLAUDECODE: '1' },
      jrun: { projectId: 'p', taskId: 'task-20260101-000000-real', runId: 'run-1', runsDir: join(task, 'runs'), messageBus: join(task, 'TASK-MESSAGE-BUS.md'), taskFolder: task, runFolder: run },
      token: `fake-${type}-key`,
      callerEnv: offlineEnv(type, server.url, home),
    });

    const registry = new AgentRegistry();
    const spec = await registry.resolve({ type }, { env });
    expect(spec.kind).toBe('cli');
    const cli = spec as CliAgentSpec;
    expect(await registry.detectVersion(cli, env)).toMatch(/\d+\.\d+\.\d+/);

    const code = await runAgent(cli, run, task, env);
    const stderr = readFileSync(join(run, 'agent-stderr.txt'), 'utf8');
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(server.requests.length).toBeGreaterThan(0);

    expect(extractOutput(type, run).outcome).toBe('parsed');
    const output = readFileSync(join(run, 'output.md'), 'utf8');
    expect(output.endsWith(ANSWER.trim())).toBe(true);
    const stdout = readFileSync(join(run, 'agent-stdout.txt'), 'utf8');
    expect(stdout).toContain('cat TASK.md');
    expect(stdout).toContain('Implement X');

    if (process.env.REAL_AGENTS_CAPTURE === '1') {
      mkdirSync(CAPTURED, { recursive: true });
      copyFileSync(join(run, 'agent-stdout.txt'), join(CAPTURED, `${type}.jsonl`));
      writeFileSync(join(CAPTURED, `${type}.version`), `${await registry.detectVersion(cli, env)}\n`);
    }
  });
});

describe.each(TYPES)('run-agent job with the real %s CLI', (type) => {
  let server: FakeModelServer;
  let root: string;

  beforeAll(async () => {
    if (!existsSync(join(BIN, type))) throw new Error(`${type} is not installed in ${BIN}`);
    if (!existsSync(join(__dirname, '..', '..', 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js'))) {
      throw new Error('build the CLI first: npx nest build cli');
    }
    server = new FakeModelServer(ANSWER, 'cat TASK.md');
    await server.start();
    root = mkdtempSync(join(tmpdir(), `real-job-${type}-`));
  });
  afterAll(async () => {
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('completes a run whose output.md is the model answer', async () => {
    const home = join(root, 'home');
    mkdirSync(home);
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      PATH: [BIN, ...(process.env.PATH ?? '').split(delimiter)].join(delimiter),
      HOME: home,
      TERM: 'dumb',
      [{ claude: 'ANTHROPIC_API_KEY', codex: 'OPENAI_API_KEY', gemini: 'GEMINI_API_KEY' }[type]]: `fake-${type}-key`,
      ...offlineEnv(type, server.url, home),
    };
    const task = `task-20260101-000000-real-${type}`;
    await new Promise<void>((resolve, reject) =>
      execFile(RUN_AGENT, ['job', '--root', join(root, 'runs'), '--project', 'real', '--task', task, '--agent', type, '--prompt', 'Read TASK.md and do it.'], { env, timeout: 150_000 }, (err, _out, stderr) =>
        err ? reject(new Error(`run-agent job failed: ${err.message}\n${stderr}`)) : resolve(),
      ),
    );
    const runsDir = join(root, 'runs', 'real', task, 'runs');
    const [runId] = readdirSync(runsDir);
    const runInfo = readFileSync(join(runsDir, runId, 'run-info.yaml'), 'utf8');
    expect(runInfo).toMatch(/^status: completed$/m);
    expect(runInfo).toMatch(/^agent_version: .*\d+\.\d+\.\d+/m);
    expect(readFileSync(join(runsDir, runId, 'output.md'), 'utf8').endsWith(ANSWER.trim())).toBe(true);
  });
});
