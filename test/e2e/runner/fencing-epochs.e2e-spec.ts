import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readOwnerEpoch, RunsLayout } from '@app/storage';
import { busMessages, busTypesAndBodies, cliEnv, commandAgentSandbox, EPOCH_AGENT, PROJECT, processAlive, RUN_AGENT, runInfos, stopOutsideFencedWrite, taskId, waitFor } from './helpers';
import { cliSpawner, countedStarts, taskBytes } from '../../utils/fenced-cli';

// Spawns the built CLI: build first (`npm run build`).
describe('fencing epochs: a stopped runner that wakes after a takeover writes nothing (issue #31)', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('epoch', EPOCH_AGENT);
  const layout = new RunsLayout(tmp.root);

  const cli = cliSpawner({ runAgent: RUN_AGENT, cwd: home, env: (e) => cliEnv(home, e), trailing: ['--root', tmp.root, '--project', PROJECT, '--agent', 'epoch', '--config', configPath, '--restart-delay', '10ms'], children });

  it('SIGSTOP the runner past its lease, resume --adopt takes over, SIGCONT: the old runner writes nothing and exits; one agent ran after the claim', async () => {
    const task = taskId('sigstop');
    const taskDir = layout.taskDir(PROJECT, task);
    const bus = layout.taskBus(PROJECT, task);
    const counter = join(base, `${task}.count`);
    const release = join(base, `${task}.release`);
    const env = { COUNTER_FILE: counter, RELEASE_FILE: release, CONDUCTOR_TASK_LEASE_MS: '500' };
    const first = cli(['task', '--task', task, '--prompt', 'fence me', '--max-restarts', '3'], env);
    const runner = first.child.pid!;
    // the agent's own record and its RUN_START are written: the runner only waits for the agent now
    const agent = await waitFor('the first agent running', () => runInfos(taskDir).find((i) => i.status === 'running' && i.pid > 0 && i.pid !== runner && i.pgid === i.pid), 20_000);
    await waitFor('RUN_START of the first agent', () => busMessages(bus).some((m) => m.type === 'RUN_START' && m.run_id === agent.run_id), 20_000);
    expect(readOwnerEpoch(taskDir)).toBe(1);
    expect(agent.owner_epoch).toBe(1);
    await stopOutsideFencedWrite(runner, taskDir);
    try {
      const claimant = cli(['task', 'resume', '--task', task, '--adopt'], env);
      await waitFor('the claimant adopting the first agent', () => busTypesAndBodies(bus).some((l) => l.startsWith(`INFO adopting run ${agent.run_id}`)), 30_000);
      expect(readOwnerEpoch(taskDir)).toBe(2);
      const startsAtClaim = countedStarts(counter).length;
      writeFileSync(release, '');
      const claimed = await claimant.done;
      expect([claimed.code, claimed.stderr, existsSync(join(taskDir, 'DONE'))]).toEqual([0, `Resuming task: ${task}\n`, true]);
      const before = taskBytes(taskDir, bus);

      process.kill(runner, 'SIGCONT');
      const stale = await first.done;
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain(`stale owner: this process holds epoch 1 of task folder ${taskDir}, but the task was claimed since (epoch 2); writing nothing more`);
      expect(taskBytes(taskDir, bus)).toEqual(before);
      // exactly one agent ran after the claim, never two at once
      expect([startsAtClaim, countedStarts(counter).length]).toEqual([1, 2]);
      expect(existsSync(`${counter}.overlap`)).toBe(false);
      expect(runInfos(taskDir).map((i) => [i.status, i.owner_epoch])).toEqual([
        ['failed', 2], // the adopted first agent, closed by the new owner
        ['completed', 2],
      ]);
      const messages = busMessages(bus);
      const takeover = messages.findIndex((m) => m.type === 'WARNING' && m.body.startsWith('took over the task from a runner that renewed nothing for 500 ms (owner epoch 2)'));
      expect(takeover).toBeGreaterThan(0);
      expect(messages.slice(0, takeover).every((m) => m.owner_epoch === 1)).toBe(true);
      expect(messages.slice(takeover).every((m) => m.owner_epoch === 2)).toBe(true);
    } finally {
      writeFileSync(release, '');
      if (processAlive(runner)) process.kill(runner, 'SIGCONT');
    }
  });

  it('a claimant whose clock jumped a day ahead (faketime) does not take a task whose runner renews its lease', async () => {
    const task = taskId('faketime');
    const taskDir = layout.taskDir(PROJECT, task);
    const bus = layout.taskBus(PROJECT, task);
    const counter = join(base, `${task}.count`);
    const release = join(base, `${task}.release`);
    const env = { COUNTER_FILE: counter, RELEASE_FILE: release, CONDUCTOR_TASK_LEASE_MS: '300' };
    const first = cli(['task', '--task', task, '--prompt', 'keep me', '--max-restarts', '3'], env);
    const runner = first.child.pid!;
    const agent = await waitFor('the first agent running', () => runInfos(taskDir).find((i) => i.status === 'running' && i.pid > 0 && i.pid !== runner && i.pgid === i.pid), 20_000);
    try {
      const all = ['task', 'resume', '--task', task, '--adopt', '--root', tmp.root, '--project', PROJECT, '--agent', 'epoch', '--config', configPath];
      const jumped = spawn('faketime', ['-f', '+1d', process.execPath, RUN_AGENT, ...all], { env: cliEnv(home, env), cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(jumped);
      let stderr = '';
      jumped.stderr!.on('data', (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => jumped.on('close', resolve));
      expect([code, stderr]).toEqual([1, expect.stringContaining(`task ${task} is already running (its Ralph loop is held by another process, pid ${runner}, which keeps renewing its lease)`)]);
      expect(readOwnerEpoch(taskDir)).toBe(1);
      writeFileSync(release, '');
      const done = await first.done;
      expect([done.code, done.stderr]).toEqual([0, expect.stringContaining('DONE: task completed')]);
      expect(busMessages(bus).every((m) => m.owner_epoch === 1)).toBe(true);
      expect(runInfos(taskDir).map((i) => [i.run_id === agent.run_id, i.status, i.owner_epoch])).toEqual([
        [true, 'completed', 1],
        [false, 'completed', 1],
      ]);
    } finally {
      writeFileSync(release, '');
    }
  });
});
