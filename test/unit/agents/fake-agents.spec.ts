import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAUDE_PLACEHOLDER_OUTPUT, CLI_AGENT_ARGS, ensureOutputFile, extractOutput } from '@app/agents';
import { envWithFakeAgents, fakeAgentPath } from '../../utils/fake-agents';
import { waitFor } from '../../utils/wait';
import { processAlive } from '../../utils/processes';

interface Started {
  pid: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts an agent the way the runner does: own session, stdin from prompt.md, stdout/stderr to files. */
function startAgent(runDir: string, command: string, args: string[], env: Record<string, string>): Started {
  const fds = [openSync(join(runDir, 'prompt.md'), 'r'), openSync(join(runDir, 'agent-stdout.txt'), 'a'), openSync(join(runDir, 'agent-stderr.txt'), 'a')];
  const child = spawn(command, args, { cwd: runDir, env, detached: true, stdio: fds });
  fds.forEach((fd) => closeSync(fd));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return { pid: child.pid!, exit };
}

/** Session id of a process (field 6 of /proc/<pid>/stat). */
function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
}

describe('fake agent executables', () => {
  let task: string;
  let run: string;
  const read = (name: string) => readFileSync(join(run, name), 'utf8');
  const jrunEnv = (extra: Record<string, string> = {}) =>
    envWithFakeAgents({ JRUN_TASK_FOLDER: task, JRUN_RUN_FOLDER: run, JRUN_ID: 'run-1', ...extra });

  beforeEach(() => {
    task = mkdtempSync(join(tmpdir(), 'agents-fake-'));
    run = join(task, 'runs', 'run-1');
    mkdirSync(run, { recursive: true });
    writeFileSync(join(run, 'prompt.md'), 'JRUN_TASK_FOLDER=...\n---\n\nDo the thing\n');
  });
  afterEach(() => rmSync(task, { recursive: true, force: true }));

  it.each(['claude', 'codex', 'gemini'] as const)('%s accepts the upstream flags and streams an answer the parser reads back', async (type) => {
    const text = 'Hello  spaced world, with  two spaces.';
    const agent = startAgent(run, type, [...CLI_AGENT_ARGS[type]], jrunEnv({ FAKE_AGENT_TEXT: text }));
    await expect(agent.exit).resolves.toEqual({ code: 0, signal: null });
    expect(read('agent-stderr.txt')).toBe('');
    expect(extractOutput(type, run).outcome).toBe('parsed');
    expect(read('output.md')).toBe(text);
  });

  it.each(['claude', 'codex', 'gemini'] as const)('%s exits 2 with a message on other arguments', async (type) => {
    const agent = startAgent(run, type, ['--prompt', 'inline'], jrunEnv());
    await expect(agent.exit).resolves.toMatchObject({ code: 2 });
    expect(read('agent-stderr.txt')).toContain(`${type}: unexpected arguments ["--prompt","inline"]`);
    expect(read('agent-stdout.txt')).toBe('');
  });

  it('dumps argv, stdin, cwd and environment', async () => {
    const dump = join(task, 'dumps');
    mkdirSync(dump);
    const agent = startAgent(run, 'codex', [...CLI_AGENT_ARGS.codex], jrunEnv({ FAKE_AGENT_ENV_DUMP: dump, MARKER: 'm1' }));
    await agent.exit;
    const record = JSON.parse(readFileSync(join(dump, 'run-1.json'), 'utf8'));
    expect(record).toMatchObject({ agent: 'codex', argv: CLI_AGENT_ARGS.codex, stdin: 'JRUN_TASK_FOLDER=...\n---\n\nDo the thing\n', cwd: run, pid: agent.pid });
    expect(record.env.MARKER).toBe('m1');
  });

  it('ends a failing claude run with an error result and keeps the assistant text parseable', async () => {
    const agent = startAgent(run, 'claude', [...CLI_AGENT_ARGS.claude], jrunEnv({ FAKE_AGENT_EXIT: '1', FAKE_AGENT_TEXT: 'partial work' }));
    await expect(agent.exit).resolves.toMatchObject({ code: 1 });
    const events = read('agent-stdout.txt').trim().split('\n').map((l) => JSON.parse(l));
    expect(events[events.length - 1]).toMatchObject({ type: 'result', is_error: true });
    extractOutput('claude', run);
    expect(read('output.md')).toBe('Reading TASK.md first.\npartial work');
  });

  it('creates DONE on the scripted attempt and follows an exit sequence', async () => {
    const env = jrunEnv({ FAKE_AGENT_DONE_ON_ATTEMPT: '2', FAKE_AGENT_EXIT_SEQUENCE: '3,0' });
    const first = await startAgent(run, 'gemini', [...CLI_AGENT_ARGS.gemini], env).exit;
    expect(first.code).toBe(3);
    expect(existsSync(join(task, 'DONE'))).toBe(false);
    const second = await startAgent(run, 'gemini', [...CLI_AGENT_ARGS.gemini], env).exit;
    expect(second.code).toBe(0);
    expect(existsSync(join(task, 'DONE'))).toBe(true);
    const third = await startAgent(run, 'gemini', [...CLI_AGENT_ARGS.gemini], env).exit;
    expect(third.code).toBe(0);
  });

  it('writes output.md itself when asked', async () => {
    await startAgent(run, 'claude', [...CLI_AGENT_ARGS.claude], jrunEnv({ FAKE_AGENT_WRITE_OUTPUT: '# written by agent' })).exit;
    expect(extractOutput('claude', run).outcome).toBe('kept');
    expect(read('output.md')).toBe('# written by agent');
  });

  it('emits progress lines for live-log tests', async () => {
    await startAgent(run, 'codex', [...CLI_AGENT_ARGS.codex], jrunEnv({ FAKE_AGENT_LINES: '3', FAKE_AGENT_LINE_INTERVAL_MS: '5' })).exit;
    const out = read('agent-stdout.txt');
    for (const i of [1, 2, 3]) expect(out).toContain(`progress ${i}`);
    expect(extractOutput('codex', run).outcome).toBe('parsed');
    expect(read('output.md')).toBe('fake codex done');
  });

  it('spawns grandchildren, every second one in its own session', async () => {
    const agent = startAgent(run, 'claude', [...CLI_AGENT_ARGS.claude], jrunEnv({ FAKE_AGENT_SPAWN_GRANDCHILDREN: '2', FAKE_AGENT_SLEEP_MS: '30000' }));
    const pidsFile = join(run, 'fake-agent-pids.json');
    await waitFor(() => existsSync(pidsFile) && readFileSync(pidsFile, 'utf8').endsWith('}'));
    const { pid, grandchildren } = JSON.parse(readFileSync(pidsFile, 'utf8')) as { pid: number; grandchildren: { pid: number; detached: boolean }[] };
    try {
      expect(pid).toBe(agent.pid);
      expect(sessionOf(agent.pid)).toBe(agent.pid);
      expect(grandchildren.map((g) => g.detached)).toEqual([false, true]);
      expect(sessionOf(grandchildren[0].pid)).toBe(agent.pid);
      expect(sessionOf(grandchildren[1].pid)).toBe(grandchildren[1].pid);
    } finally {
      process.kill(-agent.pid, 'SIGKILL');
      for (const g of grandchildren) if (processAlive(g.pid)) process.kill(g.pid, 'SIGKILL');
    }
    await expect(agent.exit).resolves.toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('ignores SIGTERM when asked, so only SIGKILL ends it', async () => {
    const agent = startAgent(run, 'gemini', [...CLI_AGENT_ARGS.gemini], jrunEnv({ FAKE_AGENT_IGNORE_SIGTERM: '1', FAKE_AGENT_SLEEP_MS: '30000' }));
    await waitFor(() => read('agent-stdout.txt').includes('"init"'));
    process.kill(-agent.pid, 'SIGTERM');
    await waitFor(() => read('agent-stderr.txt').includes('ignoring SIGTERM'));
    expect(processAlive(agent.pid)).toBe(true);
    process.kill(-agent.pid, 'SIGKILL');
    await expect(agent.exit).resolves.toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('posts to the bus through the run-agent found on PATH', async () => {
    const bin = join(task, 'bin');
    mkdirSync(bin);
    const calls = join(task, 'bus-calls.txt');
    writeFileSync(join(bin, 'run-agent'), `#!/bin/sh\nprintf '%s|' "$@" >> '${calls}'\necho MSG-1\n`);
    chmodSync(join(bin, 'run-agent'), 0o755);
    const env = jrunEnv({ FAKE_AGENT_POST_BUS: 'halfway there', FAKE_AGENT_POST_BUS_TYPE: 'FACT' });
    env.PATH = `${bin}:${env.PATH}`;
    await expect(startAgent(run, 'claude', [...CLI_AGENT_ARGS.claude], env).exit).resolves.toMatchObject({ code: 0 });
    expect(readFileSync(calls, 'utf8')).toBe('bus|post|--type|FACT|--body|halfway there|');
    expect(read('agent-stdout.txt')).not.toContain('MSG-1');
  });

  it('gemini can imitate an old CLI that rejects --output-format', async () => {
    const agent = startAgent(run, 'gemini', [...CLI_AGENT_ARGS.gemini], jrunEnv({ FAKE_AGENT_REJECT_STREAM_JSON: '1' }));
    await expect(agent.exit).resolves.toMatchObject({ code: 1 });
    expect(extractOutput('gemini', run)).toEqual({ outcome: 'unparsed', geminiFlagRejected: true });
  });

  it('claude without any text leads to the placeholder', async () => {
    await startAgent(run, 'claude', [...CLI_AGENT_ARGS.claude], jrunEnv({ FAKE_AGENT_NO_TEXT: '1' })).exit;
    expect(read('agent-stdout.txt')).toContain('"type":"result"');
    expect(extractOutput('claude', run).outcome).toBe('placeholder');
    expect(read('output.md')).toBe(CLAUDE_PLACEHOLDER_OUTPUT);
  });

  it('the generic command agent takes any arguments and prints plain text (D17)', async () => {
    const agent = startAgent(run, fakeAgentPath('fake-command-agent'), ['--anything', 'goes'], jrunEnv({ FAKE_AGENT_TEXT: 'plain answer', FAKE_AGENT_EXIT: '4' }));
    await expect(agent.exit).resolves.toMatchObject({ code: 4 });
    expect(extractOutput('command', run).outcome).toBe('unparsed');
    ensureOutputFile(run);
    expect(read('output.md')).toBe('plain answer\n');
  });

  it('raw stdout replaces the stream', async () => {
    await startAgent(run, 'codex', [...CLI_AGENT_ARGS.codex], jrunEnv({ FAKE_AGENT_RAW_STDOUT: 'not json at all\n' })).exit;
    expect(extractOutput('codex', run).outcome).toBe('unparsed');
    ensureOutputFile(run);
    expect(read('output.md')).toBe('not json at all\n');
  });
});
