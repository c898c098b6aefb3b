import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { busTypesAndBodies, cliEnv, PROJECT, runInfos, taskId, commandAgentSandbox, waitFor } from './helpers';
import { startCli, type StartedCli } from '../../utils/cli';

/** A command agent that blocks until $RELEASE_FILE exists, then marks the task DONE. */
const WAITER_AGENT = `#!/bin/sh
cat > /dev/null
while [ ! -e "$RELEASE_FILE" ]; do sleep 0.05; done
touch "$JRUN_TASK_FOLDER/DONE"
echo released
`;

// Spawns the built CLI: build first (`npx nest build cli`).
describe('one Ralph loop per task (TASK.lock, two real run-agent processes)', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('waiter', WAITER_AGENT);
  const layout = new RunsLayout(tmp.root);

  function startTask(task: string, releaseFile: string): StartedCli {
    const args = ['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'hold the task', '--agent', 'waiter', '--config', configPath, '--max-restarts', '0'];
    const started = startCli(args, { env: cliEnv(home, { RELEASE_FILE: releaseFile }), cwd: home });
    children.push(started.child);
    return started;
  }

  const lockedMessage = (task: string, pid: number) =>
    `Error: task ${task} is already running (its Ralph loop is held by another process, pid ${pid}); ` +
    `stop it with \`run-agent stop --project ${PROJECT} --task ${task}\` or wait\n`;

  const waitForRunningRun = (taskDir: string) => waitFor(() => runInfos(taskDir).some((i) => i.status === 'running'), 20_000);

  it('a second loop on the same task fails at once with exit 1 and changes nothing; it succeeds after the first ends', async () => {
    const task = taskId('lock');
    const taskDir = layout.taskDir(PROJECT, task);
    const firstRelease = join(base, 'release-first');
    const secondRelease = join(base, 'release-second');
    writeFileSync(secondRelease, '');

    const first = startTask(task, firstRelease);
    await waitForRunningRun(taskDir);

    const second = await startTask(task, secondRelease).done;
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(lockedMessage(task, first.child.pid!));
    expect(runInfos(taskDir)).toHaveLength(1);
    expect(busTypesAndBodies(layout.taskBus(PROJECT, task)).filter((l) => l.startsWith('INFO starting root agent'))).toHaveLength(1);

    writeFileSync(firstRelease, '');
    expect((await first.done).code).toBe(0);
    expect(existsSync(join(taskDir, 'DONE'))).toBe(true);

    rmSync(join(taskDir, 'DONE'));
    const third = await startTask(task, secondRelease).done;
    expect(third).toMatchObject({ code: 0, stderr: expect.stringContaining('DONE: task completed') });
    const infos = runInfos(taskDir);
    expect(infos.map((i) => i.status)).toEqual(['completed', 'completed']);
  });

  it('a SIGKILLed holder does not block the next loop (the kernel drops its flock)', async () => {
    const task = taskId('lock-killed');
    const taskDir = layout.taskDir(PROJECT, task);
    const release = join(base, 'release-killed');
    try {
      const holder = startTask(task, release);
      await waitForRunningRun(taskDir);
      holder.child.kill('SIGKILL');
      await holder.done;

      const next = startTask(task, release);
      await waitFor(() => runInfos(taskDir).length === 2, 20_000);
      writeFileSync(release, '');
      expect(await next.done).toMatchObject({ code: 0, stderr: expect.stringContaining('DONE: task completed') });
      expect(existsSync(join(taskDir, 'DONE'))).toBe(true);
    } finally {
      writeFileSync(release, '');
    }
  });
});
