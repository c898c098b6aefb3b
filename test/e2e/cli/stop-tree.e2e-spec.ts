import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { busMessages, cliEnv, PROJECT, processAlive, runInfos, taskId, tempRoot, waitFor } from '../runner/helpers';
import { runCli, startCli, type StartedCli } from '../../utils/cli';

/*
 * #30 item 2: `run-agent stop --project P --task T` stops the whole task tree. The root agent
 * starts a sub-agent (`run-agent job --parent-run-id`, as the preamble tells it) and waits for
 * it, then writes DONE: stopping only the newest run (the child) let the root go on, write DONE
 * and complete the task. Real CLI loop, real sub-agent, real processes.
 */
describe('run-agent stop --project/--task stops the whole task tree (#30 item 2)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = mkdtempSync(join(tmpdir(), 'stop-tree-home-'));
  const loops: StartedCli[] = [];
  let configPath: string;
  beforeAll(() => {
    const root = join(home, 'root-agent');
    writeFileSync(
      root,
      [
        '#!/bin/sh',
        'cat > /dev/null',
        'FAKE_AGENT_SLEEP_MS=60000 run-agent job --project "$JRUN_PROJECT_ID" --task "$JRUN_TASK_ID" --parent-run-id "$JRUN_ID" --agent claude --prompt "sub-task" >/dev/null 2>&1 &',
        'wait',
        'touch "$JRUN_TASK_FOLDER/DONE"',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    configPath = join(home, 'config.yaml');
    writeFileSync(configPath, `agents:\n  root:\n    type: command\n    command: ${root}\n  claude:\n    type: claude\nstorage:\n  runs_dir: ${tmp.root}\n`);
  });
  afterEach(() => {
    for (const l of loops.splice(0)) if (l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGKILL');
  });
  afterAll(() => {
    tmp.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  it('the root and its sub-agent are stopped, the loop ends stopped: no DONE, no completion', async () => {
    const task = taskId('stoptree');
    const taskDir = layout.taskDir(PROJECT, task);
    const env = cliEnv(home);
    const loop = startCli(['task', '--config', configPath, '--project', PROJECT, '--task', task, '--agent', 'root', '--prompt', 'delegate', '--restart-delay', '10ms'], { env });
    loops.push(loop);
    // both runs have their agents: the root (a command agent) and the child (claude)
    const [rootRun, childRun] = await waitFor('the root run and its sub-agent run', () => {
      const infos = runInfos(taskDir);
      const r = infos.find((i) => !i.parent_run_id && i.pid > 0 && i.commandline);
      const c = infos.find((i) => i.parent_run_id && i.pid > 0 && i.commandline);
      return r && c ? [r, c] : undefined;
    });
    expect(childRun.parent_run_id).toBe(rootRun.run_id);

    const stop = await runCli(['stop', '--config', configPath, '--project', PROJECT, '--task', task, '--grace', '2s'], { env });
    expect([stop.code, stop.stderr]).toEqual([0, '']);
    expect(stop.stdout).toBe(`Stopped run ${rootRun.run_id} (PID ${rootRun.pid})\nStopped run ${childRun.run_id} (PID ${childRun.pid})\n`);

    const outcome = await loop.done;
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/(^|\n)Error: task stopped: [^\n]+\n$/);
    expect(existsSync(join(taskDir, 'DONE'))).toBe(false);
    expect([rootRun.pid, childRun.pid].filter(processAlive)).toEqual([]);
    expect(runInfos(taskDir).map((i) => i.status)).toEqual(['failed', 'failed']);
    const bus = busMessages(layout.taskBus(PROJECT, task));
    expect(bus.filter((m) => /^task completed/.test(m.body))).toEqual([]);
    expect(bus.filter((m) => m.type === 'INFO' && m.body.startsWith('starting root agent'))).toHaveLength(1);
    expect(busMessages(layout.projectBus(PROJECT)).filter((m) => m.task_id === task)).toEqual([]);

    const status = await runCli(['status', '--config', configPath, '--project', PROJECT, '--task', task, '--json'], { env });
    expect(JSON.parse(status.stdout).tasks[0]).toMatchObject({ task_id: task, status: 'stopped', done: false });
  }, 60_000);

  it('--run stops that run and its sub-agents only; without a running run the task stop says so', async () => {
    const task = taskId('stoprun');
    const taskDir = layout.taskDir(PROJECT, task);
    const env = cliEnv(home);
    const loop = startCli(['task', '--config', configPath, '--project', PROJECT, '--task', task, '--agent', 'root', '--prompt', 'delegate', '--restart-delay', '10ms'], { env });
    loops.push(loop);
    const childRun = await waitFor('the sub-agent run', () => runInfos(taskDir).find((i) => i.parent_run_id && i.pid > 0 && i.commandline));
    const stop = await runCli(['stop', '--config', configPath, '--project', PROJECT, '--task', task, '--run', childRun.run_id, '--grace', '2s'], { env });
    expect([stop.code, stop.stdout]).toEqual([0, `Stopped run ${childRun.run_id} (PID ${childRun.pid})\n`]);
    // the root's `wait` returns, it writes DONE; the stop marker the run stop wrote ends the loop stopped
    const outcome = await loop.done;
    expect(outcome.code).toBe(1);
    expect(busMessages(layout.taskBus(PROJECT, task)).filter((m) => /^task completed/.test(m.body))).toEqual([]);
    const none = await runCli(['stop', '--config', configPath, '--project', PROJECT, '--task', task], { env });
    expect([none.code, none.stderr]).toEqual([1, `Error: no running runs found for project ${PROJECT} task ${task}\n`]);
  }, 60_000);
});
