import type { ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { readMessages, type BusMessage } from '@app/messagebus';
import { readRunInfo, tryFlock, unflock, type RunInfo } from '@app/storage';
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

import { waitFor } from '../../utils/wait';

export { waitFor };
import { processAlive } from '../../utils/processes';
export { processAlive };

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** Nobody holds the task's fence lock (OWNER-EPOCH.lock): no fenced write is under way. */
function fenceFree(taskDir: string): boolean {
  const fd = openSync(join(taskDir, 'OWNER-EPOCH.lock'), 'a+');
  try {
    if (!tryFlock(fd, 'ex')) return false;
    unflock(fd);
    return true;
  } finally {
    closeSync(fd);
  }
}

/**
 * SIGSTOPs a runner outside its fenced writes (issue #31): a runner stopped inside one (between a
 * bus write and the release of its locks, a few microseconds) would make any claim fail, by design;
 * so when it is caught there it is continued and stopped again. Waits for each state change.
 */
export async function stopOutsideFencedWrite(pid: number, taskDir: string): Promise<void> {
  await waitFor(`runner ${pid} stopped outside a fenced write`, async () => {
    process.kill(pid, 'SIGSTOP');
    await waitFor(`runner ${pid} stopped`, () => processState(pid) === 'T', 10_000);
    if (fenceFree(taskDir)) return true;
    process.kill(pid, 'SIGCONT');
    await waitFor(`runner ${pid} continued`, () => processState(pid) !== 'T', 10_000);
    return undefined;
  }, 20_000);
}

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

/**
 * The start of a command agent (sh) that records every start (its pid in $COUNTER_FILE, by default
 * `agents` in its task's folder) and any other recorded agent still alive (not a zombie) at that
 * moment (an overlap, in $COUNTER_FILE.overlap).
 */
export const COUNTED_AGENT_PRELUDE = `#!/bin/sh
cat > /dev/null
COUNTER_FILE="\${COUNTER_FILE:-$JRUN_TASK_FOLDER/agents}"
for p in $(cat "$COUNTER_FILE" 2>/dev/null); do
  st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$st" ] && [ "$st" != Z ] && echo "$p alive ($st) when $$ started" >> "$COUNTER_FILE.overlap"
done
echo "$$" >> "$COUNTER_FILE"
`;

/**
 * A command agent that records every start (its pid) and any other recorded agent still alive (not
 * a zombie) at that moment (an overlap). The first start blocks until $RELEASE_FILE exists and ends
 * without DONE; a later one marks the task DONE at once.
 */
export const EPOCH_AGENT = `${COUNTED_AGENT_PRELUDE}if [ "$(wc -l < "$COUNTER_FILE")" -ge 2 ]; then touch "$JRUN_TASK_FOLDER/DONE"; exit 0; fi
while [ ! -e "$RELEASE_FILE" ]; do sleep 0.05; done
`;

/**
 * A private runtime folder for the task supervisor's sockets (XDG_RUNTIME_DIR, 0700) and the env of
 * a supervised client (RUN_AGENT_SUPERVISOR=1, idle after 2 s, one shard: the specs follow the
 * requests of one supervisor; the spread over shards is the unit test's); supervisors a spec noted with
 * `supervisors.add(pid)` are SIGKILLed after it.
 */
export function supervisorSandbox(base: string, home: string) {
  const runtimeDir = join(base, 'xdg');
  const supervisors = new Set<number>();
  beforeAll(() => mkdirSync(runtimeDir, { mode: 0o700 }));
  afterAll(() => {
    for (const pid of supervisors) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  const env = (extra: Record<string, string> = {}) => cliEnv(home, { RUN_AGENT_SUPERVISOR: '1', XDG_RUNTIME_DIR: runtimeDir, RUN_AGENT_SUPERVISOR_IDLE_MS: '2000', RUN_AGENT_SUPERVISOR_SHARDS: '1', ...extra });
  return { runtimeDir, supervisors, env };
}
