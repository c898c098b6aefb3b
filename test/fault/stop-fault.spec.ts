import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { startCli, runCli, type StartedCli } from '../utils/cli';
import { envWithFakeAgents } from '../utils/fake-agents';
import { processAlive } from '../utils/processes';
import { waitFor } from '../utils/wait';
import { runInfos, taskId, tempRoot } from '../e2e/runner/helpers';
import { ERRNOS, type ErrnoName, type FaultPoint, runWithFault } from './fiu';

/*
 * #30 item 2 with the stop marker's write failing (libfiu under the real built bin/run-agent): a
 * stop is acknowledged only once STOP-REQUESTED is on disk. `run-agent stop --project/--task`
 * (the whole tree, stopTask) and `--run` fail with one line and exit 1 when fsync or rename of
 * the marker fails, and leave the task as it was: no marker, the run still running. The same stop
 * without the fault then stops it.
 */
describe('run-agent stop fails when its stop marker cannot be written', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const env = envWithFakeAgents({ NODE_DISABLE_COMPILE_CACHE: '1', CONDUCTOR_ROOT: undefined, RUN_AGENT_ROOT: undefined, FAKE_AGENT_SLEEP_MS: '60000' });
  const loops: StartedCli[] = [];
  afterAll(() => {
    for (const l of loops) if (l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGKILL');
    tmp.cleanup();
  });

  const cases: Array<[string, FaultPoint, ErrnoName, boolean]> = [
    ['the task (stopTask)', 'posix/io/sync/fsync', 'EIO', false],
    ['the task (stopTask)', 'posix/io/dir/rename', 'ENOSPC', false],
    ['one run (--run)', 'posix/io/sync/fsync', 'EDQUOT', true],
  ];
  it.each(cases)('stop of %s with %s failing (%s): exit 1, one line, nothing stopped', async (_what, point, errno, byRun) => {
    const task = taskId('stopfault');
    const taskDir = layout.taskDir('proj', task);
    const scope = ['--root', tmp.root, '--project', 'proj', '--task', task];
    const loop = startCli(['task', ...scope, '--agent', 'claude', '--prompt', 'work', '--cwd', dirname(tmp.root)], { env });
    loops.push(loop);
    const run = await waitFor('the agent to run', () => runInfos(taskDir).find((i) => i.status === 'running' && i.pid > 0 && i.commandline));
    const args = ['stop', ...scope, '--grace', '2s', ...(byRun ? ['--run', run.run_id] : [])];

    const failed = await runWithFault(args, { point, errno }, env);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^Error: write stop-request marker: [^\n]+\n$/);
    expect(failed.stderr.includes(errno) || failed.stderr.includes(`-${ERRNOS[errno]}`) || failed.stderr.includes('NO_SPACE')).toBe(true);
    expect(existsSync(join(taskDir, 'STOP-REQUESTED'))).toBe(false);
    expect(processAlive(run.pid)).toBe(true);
    expect(runInfos(taskDir).map((i) => i.status)).toEqual(['running']);

    const stop = await runCli(args, { env });
    expect([stop.code, stop.stdout]).toEqual([0, `Stopped run ${run.run_id} (PID ${run.pid})\n`]);
    expect((await loop.done).code).toBe(1);
    expect(existsSync(join(taskDir, 'STOP-REQUESTED'))).toBe(true);
  });
});
