import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { busTypesAndBodies, cliEnv, processAlive, PROJECT, readJson, runInfos, taskId, tempRoot, waitFor } from './helpers';
import { startCli } from '../../utils/cli';

function start(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return startCli(args, { env, cwd });
}

// Spawns the built CLI: build first (`npx nest build cli`).
describe('run-agent job / task / stop / resume (built CLI)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = join(tmp.root, '..', 'home');
  mkdirSync(home, { recursive: true });
  const run = (args: string[], extra: Record<string, string> = {}) => start(args, cliEnv(home, extra), home).done;
  afterAll(() => tmp.cleanup());

  it('usage errors exit 2 with one line; a failing agent exits 1', async () => {
    const badTimeout = await run(['job', '--root', tmp.root, '--project', PROJECT, '--task', taskId(), '--prompt', 'x', '--agent', 'claude', '--timeout', 'soon']);
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toBe('Error: invalid --timeout "soon": use a Go duration such as 30s, 20m or 168h\n');
    const noPrompt = await run(['job', '--root', tmp.root, '--project', PROJECT, '--task', taskId(), '--agent', 'claude']);
    expect(noPrompt.code).toBe(2);
    expect(noPrompt.stderr).toBe('Error: prompt is empty: pass --prompt or --prompt-file\n');
    const badTask = await run(['task', '--root', tmp.root, '--project', PROJECT, '--task', '../../etc', '--prompt', 'x']);
    expect(badTask.code).toBe(2);
    expect(existsSync(join(tmp.root, PROJECT))).toBe(false);
    const failing = await run(['job', '--root', tmp.root, '--project', PROJECT, '--task', taskId(), '--prompt', 'x', '--agent', 'codex'], { FAKE_AGENT_EXIT: '1' });
    expect(failing.code).toBe(1);
    expect(failing.stderr).toBe('Error: agent execution failed: exit status 1\n');
  }, 30_000);

  it('task: DONE on the third attempt exits 0; job --help explains the flags', async () => {
    const task = taskId('cli3');
    const result = await run(['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'x', '--agent', 'claude', '--restart-delay', '10ms'], {
      FAKE_AGENT_DONE_ON_ATTEMPT: '3',
    });
    // not a terminal: plain progress lines, one per event
    expect(result.stderr).toMatch(/^\[\d\d:\d\d:\d\d\] attempt 1: run \S+ started with agent claude\n/);
    expect(result.stderr).toMatch(/\] attempt 3: run \S+ exited with code 0; DONE written\n/);
    expect(result.stderr).not.toContain('\u001b[');
    expect(result.code).toBe(0);
    expect(runInfos(layout.taskDir(PROJECT, task))).toHaveLength(3);
    const help = await run(['job', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--parent-run-id <id>');
    expect(help.stdout).toContain('--project <id>');
  }, 30_000);

  it('job inside an agent (JRUN_* env, flags as in the preamble) becomes a child run of the same task', async () => {
    const task = taskId('inagent');
    const taskDir = layout.taskDir(PROJECT, task);
    const env = { JRUN_PROJECT_ID: PROJECT, JRUN_TASK_ID: task, JRUN_ID: 'PARENT-RUN', JRUN_TASK_FOLDER: taskDir };
    const result = await run(['job', '--project', PROJECT, '--task', task, '--parent-run-id', 'PARENT-RUN', '--agent', 'claude', '--prompt', 'sub-task'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(runInfos(taskDir)).toEqual([expect.objectContaining({ parent_run_id: 'PARENT-RUN', status: 'completed' })]);
  }, 30_000);

  it('Ctrl-C of run-agent task stops the agent and its tree', async () => {
    const task = taskId('sigint');
    const taskDir = layout.taskDir(PROJECT, task);
    const { child, done } = start(
      ['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'x', '--agent', 'codex'],
      cliEnv(home, { FAKE_AGENT_SLEEP_MS: '60000', FAKE_AGENT_SPAWN_GRANDCHILDREN: '2' }),
      home,
    );
    const pidsFile = await waitFor(() => {
      const [info] = runInfos(taskDir);
      const file = info && join(layout.runsDir(PROJECT, task), info.run_id, 'fake-agent-pids.json');
      return file && existsSync(file) ? file : undefined;
    }, 20_000);
    const pids = readJson<{ pid: number; grandchildren: { pid: number }[] }>(pidsFile);
    child.kill('SIGINT');
    const outcome = await done;
    expect(outcome.code === 130 || outcome.signal === 'SIGINT').toBe(true);
    expect([pids.pid, ...pids.grandchildren.map((g) => g.pid)].filter(processAlive)).toEqual([]);
    const [info] = runInfos(taskDir);
    expect(info).toMatchObject({ status: 'failed', exit_code: 143 });
    expect(info.error_summary).toMatch(/^stopped by run-agent \(pid \d+\) received SIGINT \(SIGTERM\)$/);
  }, 30_000);

  it('stop --project/--task: the run is stopped, the task loop ends without a restart', async () => {
    const task = taskId('clistop');
    const taskDir = layout.taskDir(PROJECT, task);
    const loop = start(
      ['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'x', '--agent', 'claude', '--restart-delay', '10ms'],
      cliEnv(home, { FAKE_AGENT_SLEEP_MS: '60000', FAKE_AGENT_IGNORE_SIGTERM: '1' }),
      home,
    );
    const info = await waitFor(() => runInfos(taskDir).find((i) => i.pid > 0 && i.commandline), 20_000);
    const stop = await run(['stop', '--root', tmp.root, '--project', PROJECT, '--task', task, '--grace', '500ms']);
    expect(stop.stderr).toBe('');
    expect(stop.code).toBe(0);
    expect(stop.stdout).toBe(`Stopped run ${info.run_id} (PID ${info.pid})\n`);
    const outcome = await loop.done;
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/(^|\n)Error: task stopped: [^\n]+\n$/);
    expect(runInfos(taskDir)).toHaveLength(1);
    expect(processAlive(info.pid)).toBe(false);
    expect(busTypesAndBodies(layout.taskBus(PROJECT, task)).filter((l) => l.startsWith('INFO starting root agent'))).toHaveLength(1);

    const resumed = await run(['resume', '--root', tmp.root, '--project', PROJECT, '--task', task]);
    expect(resumed.stdout).toBe(`Resumed task ${task} (restart counter reset)\n`);
    expect(existsSync(join(taskDir, 'STOP-REQUESTED'))).toBe(false);
  }, 30_000);
});
