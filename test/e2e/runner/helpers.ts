import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { readMessages, type BusMessage } from '@app/messagebus';
import { readRunInfo, type RunInfo } from '@app/storage';
import { fakeAgentsBinDir } from '../../utils/fake-agents';

export const PROJECT = 'proj';
export const REPO_ROOT = join(__dirname, '..', '..', '..');
export const RUN_AGENT = join(REPO_ROOT, 'bin', 'run-agent');
/** Test-only agents of this suite (shell scripts), next to the shared fake agents. */
export const SUITE_AGENTS = join(__dirname, 'agents');

let seq = 0;
export function taskId(slug = 'runner'): string {
  seq++;
  return `task-20260101-000000-${slug}-${process.pid}-${seq}`;
}

export function tempRoot(): { root: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'runner-e2e-'));
  return { root: join(dir, 'runs'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Caller env for the engine: fake agents first on PATH plus scripted FAKE_AGENT_* behaviour. */
export function agentEnv(extra: Record<string, string> = {}): Record<string, string> {
  const path = [fakeAgentsBinDir(), SUITE_AGENTS, join(REPO_ROOT, 'bin'), ...(process.env.PATH ?? '').split(delimiter)].filter((d) => d).join(delimiter);
  return { PATH: path, ...extra };
}

/** Env for spawning bin/run-agent as a separate process: no inherited JRUN_* scope, a temp HOME. */
export function cliEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(JRUN_|FAKE_AGENT_|CONDUCTOR_|RUN_AGENT_ROOT|MESSAGE_BUS|TASK_FOLDER|RUN_FOLDER)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, HOME: home, ...agentEnv(), ...extra };
}

export function busMessages(path: string): BusMessage[] {
  return existsSync(path) ? readMessages(path) : [];
}

export function busTypesAndBodies(path: string): string[] {
  return busMessages(path).map((m) => `${m.type} ${m.body.split('\n')[0]}`);
}

export function runInfos(taskDir: string): RunInfo[] {
  const runsDir = join(taskDir, 'runs');
  if (!existsSync(runsDir)) return [];
  return readdirSync(runsDir)
    .sort()
    .filter((r) => existsSync(join(runsDir, r, 'run-info.yaml')))
    .map((r) => readRunInfo(join(runsDir, r, 'run-info.yaml')));
}

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

export { waitFor } from '../../utils/wait';
export { processAlive } from '../../utils/processes';

/**
 * A temp runs root with a config naming one `command` agent (`script`, written next to the root),
 * an empty HOME, and the child processes a test starts, SIGKILLed after each test.
 */
export function commandAgentSandbox(agentName: string, script: string) {
  const tmp = tempRoot();
  const base = dirname(tmp.root);
  const home = join(base, 'home');
  const configPath = join(base, 'config.yaml');
  const children: ChildProcess[] = [];
  beforeAll(() => {
    mkdirSync(home, { recursive: true });
    const agent = join(base, `${agentName}-agent`);
    writeFileSync(agent, script);
    chmodSync(agent, 0o755);
    writeFileSync(configPath, `agents:\n  ${agentName}:\n    type: command\n    command: ${agent}\n`);
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  afterAll(() => tmp.cleanup());
  return { tmp, base, home, configPath, children };
}
