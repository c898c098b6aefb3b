import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { startCli, type StartedCli } from '../../utils/cli';
import { commandAgentSandbox, PROJECT, processAlive, runInfos, supervisorSandbox, taskId, waitFor } from './helpers';

/** Records "<pid> <parent pid>" (its parent is the process that runs the loop), then waits for GO; AGENT_MODE=fail exits 3 at once. */
const AGENT = `#!/bin/sh
cat > /dev/null
echo "$$ $PPID" > "$JRUN_TASK_FOLDER/agent"
[ "$AGENT_MODE" = fail ] && exit 3
while [ ! -e "$JRUN_TASK_FOLDER/GO" ]; do sleep 0.05; done
touch "$JRUN_TASK_FOLDER/DONE"
`;

// Spawns the built CLI: build first (`npm run build:cli`).
describe('run-agent task through the host task supervisor (RUN_AGENT_SUPERVISOR=1, issue #33)', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('held', AGENT);
  const layout = new RunsLayout(tmp.root);
  const { runtimeDir, supervisors, env } = supervisorSandbox(base, home);
  const socketDir = join(runtimeDir, 'run-agent');
  function task(id: string, extra: Record<string, string> = {}, flags: string[] = []): StartedCli {
    const started = startCli(['task', '--root', tmp.root, '--project', PROJECT, '--task', id, '--agent', 'held', '--config', configPath, '--max-restarts', '0', '--prompt', 'hold', ...flags], { env: env(extra), cwd: home });
    children.push(started.child);
    return started;
  }
  const taskDir = (id: string) => layout.taskDir(PROJECT, id);
  /** The agent's pid and its parent's (the loop's process), once it runs. */
  async function agentOf(id: string): Promise<{ pid: number; parent: number }> {
    const [pid, parent] = await waitFor(`the agent of ${id}`, () => {
      const ids = readFileSync(join(taskDir(id), 'agent'), 'utf8').trim().split(' ').map(Number);
      return ids.length === 2 && ids.every((n) => n > 0) && ids;
    });
    supervisors.add(parent);
    return { pid, parent };
  }
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const go = (id: string) => writeFileSync(join(taskDir(id), 'GO'), '');

  it('runs the loops of two clients in one supervisor; each client prints its progress and exits with its task', async () => {
    const [a, b] = [taskId('sup-a'), taskId('sup-b')];
    const first = task(a);
    const second = task(b);
    const [agentA, agentB] = await Promise.all([agentOf(a), agentOf(b)]);
    expect(agentA.parent).toBe(agentB.parent);
    expect([first.child.pid, second.child.pid]).not.toContain(agentA.parent);
    expect(cmdline(agentA.parent).some((arg) => arg.endsWith('task-supervisor.js'))).toBe(true);
    go(a);
    go(b);
    for (const done of [first.done, second.done]) expect(await done).toMatchObject({ code: 0, stderr: expect.stringContaining('DONE: task completed') });
    expect(runInfos(taskDir(a)).map((i) => i.status)).toEqual(['completed']);
  });

  it('a failed task ends its client with the exit code and error line an in-process task gives', async () => {
    const [supervised, inProcess] = [taskId('sup-fail'), taskId('own-fail')];
    const viaSupervisor = await task(supervised, { AGENT_MODE: 'fail' }).done;
    const own = task(inProcess, { AGENT_MODE: 'fail', RUN_AGENT_SUPERVISOR: '0' });
    const here = await own.done;
    expect(here.code).not.toBe(0);
    expect(viaSupervisor.code).toBe(here.code);
    const lastLine = (s: string, id: string) => s.trim().split('\n').pop()!.replaceAll(id, 'ID');
    expect(lastLine(viaSupervisor.stderr, supervised)).toBe(lastLine(here.stderr, inProcess));
    expect(lastLine(here.stderr, inProcess)).toMatch(/^Error: /);
    const { parent } = await agentOf(supervised);
    expect(parent).not.toBe((await agentOf(inProcess)).parent);
  });

  it('a SIGKILLed client stops its own agent only; the supervisor goes on serving', async () => {
    const [killed, kept] = [taskId('sup-killed'), taskId('sup-kept')];
    const victim = task(killed);
    const survivor = task(kept);
    const [agent, other] = await Promise.all([agentOf(killed), agentOf(kept)]);
    victim.child.kill('SIGKILL');
    await victim.done;
    await waitFor('the killed client’s agent gone', () => !processAlive(agent.pid));
    expect(processAlive(other.pid)).toBe(true);
    await waitFor('the killed task’s run recorded as ended', () => runInfos(taskDir(killed)).every((i) => i.status !== 'running'));
    go(kept);
    expect(await survivor.done).toMatchObject({ code: 0 });
    expect(processAlive(other.parent)).toBe(true);
  });

  it('SIGINT: the agent is stopped first, then the client dies of SIGINT, as an in-process task does', async () => {
    const id = taskId('sup-int');
    const client = task(id);
    const agent = await agentOf(id);
    client.child.kill('SIGINT');
    expect(await client.done).toMatchObject({ signal: 'SIGINT' });
    expect(processAlive(agent.pid)).toBe(false);
  });

  it('a SIGKILLed supervisor: its agents die with it (the watchdog) and the client says so, exit 1', async () => {
    const id = taskId('sup-dead');
    const client = task(id, { RUN_AGENT_ORPHAN_GRACE_SECONDS: '1' });
    const agent = await agentOf(id);
    process.kill(agent.parent, 'SIGKILL');
    const result = await client.done;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the task supervisor (pid ${agent.parent}) ended before the task did`);
    await waitFor('the orphaned agent gone', () => !processAlive(agent.pid));
  });

  it('drops a connection that sends garbage or an endless line, and serves the next client', async () => {
    const id = taskId('sup-garbage');
    const client = task(id);
    const { parent } = await agentOf(id);
    const socket = cmdline(parent).filter(Boolean).pop()!;
    const dropped = (payload: string) =>
      new Promise<void>((resolve, reject) => {
        const conn = createConnection(socket, () => conn.write(payload));
        conn.on('error', () => undefined);
        conn.on('close', () => resolve());
        conn.setTimeout(20_000, () => reject(new Error('the supervisor kept the connection')));
      });
    await dropped('not json\n');
    await dropped('x'.repeat(2 << 20));
    go(id);
    expect(await client.done).toMatchObject({ code: 0 });
    const next = taskId('sup-after-garbage');
    const after = task(next);
    expect((await agentOf(next)).parent).toBe(parent);
    go(next);
    expect(await after.done).toMatchObject({ code: 0 });
  });

  it('exits once idle and removes its socket', async () => {
    const id = taskId('sup-idle');
    const client = task(id, { RUN_AGENT_SUPERVISOR_IDLE_MS: '200' });
    const { parent } = await agentOf(id);
    const socket = cmdline(parent).filter(Boolean).pop()!;
    expect(socket.startsWith(socketDir)).toBe(true);
    expect(existsSync(socket)).toBe(true);
    go(id);
    expect(await client.done).toMatchObject({ code: 0 });
    await waitFor('the idle supervisor gone', () => !processAlive(parent));
    expect(existsSync(socket)).toBe(false);
  });

  it('fails closed: a bad RUN_AGENT_SUPERVISOR or RUN_AGENT_SUPERVISOR_SHARDS, or a socket folder others can enter, is exit 2, and no task starts', async () => {
    const bad = taskId('sup-bad');
    const res = await task(bad, { RUN_AGENT_SUPERVISOR: 'maybe' }).done;
    expect(res).toMatchObject({ code: 2, stderr: 'Error: RUN_AGENT_SUPERVISOR must be 1 or 0 (got "maybe")\n' });
    const shards = await task(bad, { RUN_AGENT_SUPERVISOR_SHARDS: '0' }).done;
    expect(shards).toMatchObject({ code: 2, stderr: 'Error: RUN_AGENT_SUPERVISOR_SHARDS must be a whole number from 1 to 64 (got "0")\n' });
    const open = join(base, 'open-runtime');
    mkdirSync(join(open, 'run-agent'), { recursive: true });
    chmodSync(join(open, 'run-agent'), 0o755);
    const shared = await task(bad, { XDG_RUNTIME_DIR: open }).done;
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain('is not a private folder of this user');
    expect(existsSync(taskDir(bad))).toBe(false);
  });

  it('leaves --help and usage errors to the CLI itself', async () => {
    const help = startCli(['task', '--help'], { env: env(), cwd: home });
    expect(await help.done).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: run-agent task') });
    const usage = startCli(['task', '--bogus'], { env: env(), cwd: home });
    expect(await usage.done).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown option '--bogus'") });
  });
});
