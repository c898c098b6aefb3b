import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OWNER_EPOCH_FILE, readOwnerEpoch, RunsLayout } from '@app/storage';
import { busMessages, busTypesAndBodies, cliEnv, commandAgentSandbox, EPOCH_AGENT, PROJECT, processAlive, RUN_AGENT, runInfos, stopOutsideFencedWrite, taskId, waitFor } from './helpers';
import { cliSpawner, countedStarts, taskBytes } from '../../utils/fenced-cli';

// Spawns the built CLI: build first (`npm run build`). Issue #31: a root `run-agent job` run on its
// own (no task loop, no parent run) owns its task like a loop: TASK.lock with a lease, an owner
// epoch claimed as `job`, every write fenced.
describe('a standalone root job is fenced like a loop (issue #31)', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('epoch', EPOCH_AGENT);
  const layout = new RunsLayout(tmp.root);

  const cli = cliSpawner({ runAgent: RUN_AGENT, cwd: home, env: (e) => cliEnv(home, e), trailing: ['--root', tmp.root, '--project', PROJECT, '--agent', 'epoch', '--config', configPath], children });

  it('claims an epoch as `job`, refuses a second root job, and once taken over (SIGSTOP past its lease, resume --adopt) writes nothing and exits', async () => {
    const task = taskId('jobfence');
    const taskDir = layout.taskDir(PROJECT, task);
    const bus = layout.taskBus(PROJECT, task);
    const counter = join(base, `${task}.count`);
    const release = join(base, `${task}.release`);
    const env = { COUNTER_FILE: counter, RELEASE_FILE: release, CONDUCTOR_TASK_LEASE_MS: '500' };
    const job = cli(['job', '--task', task, '--prompt', 'fence this job'], env);
    const pid = job.child.pid!;
    try {
      const agent = await waitFor('the job’s agent running', () => runInfos(taskDir).find((i) => i.status === 'running' && i.pid > 0 && i.pid !== pid && i.pgid === i.pid), 20_000);
      await waitFor('RUN_START of the job', () => busMessages(bus).some((m) => m.type === 'RUN_START' && m.run_id === agent.run_id), 20_000);
      expect(readOwnerEpoch(taskDir)).toBe(1);
      expect(readFileSync(join(taskDir, OWNER_EPOCH_FILE), 'utf8')).toMatch(/^claimed_by: job$/m);
      expect(agent.owner_epoch).toBe(1);
      expect(busMessages(bus).every((m) => m.owner_epoch === 1)).toBe(true);

      // a second root job of the task is refused while this one owns it; nothing changes
      const second = await cli(['job', '--task', task, '--prompt', 'me too'], env).done;
      expect([second.code, second.stderr]).toEqual([1, expect.stringContaining(`task ${task} is already running (its Ralph loop is held by another process, pid ${pid})`)]);
      expect(readOwnerEpoch(taskDir)).toBe(1);
      expect(runInfos(taskDir)).toHaveLength(1);

      await stopOutsideFencedWrite(pid, taskDir);
      const claimant = cli(['task', 'resume', '--task', task, '--adopt', '--restart-delay', '10ms', '--max-restarts', '3'], env);
      await waitFor('the claimant adopting the job’s agent', () => busTypesAndBodies(bus).some((l) => l.startsWith(`INFO adopting run ${agent.run_id}`)), 30_000);
      expect(readOwnerEpoch(taskDir)).toBe(2);
      const startsAtClaim = countedStarts(counter).length;
      writeFileSync(release, '');
      const claimed = await claimant.done;
      expect([claimed.code, existsSync(join(taskDir, 'DONE'))]).toEqual([0, true]);
      const before = taskBytes(taskDir, bus);

      process.kill(pid, 'SIGCONT');
      const stale = await job.done;
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain(`stale owner: this process holds epoch 1 of task folder ${taskDir}, but the task was claimed since (epoch 2); writing nothing more`);
      expect(taskBytes(taskDir, bus)).toEqual(before);
      expect([startsAtClaim, countedStarts(counter).length]).toEqual([1, 2]);
      expect(existsSync(`${counter}.overlap`)).toBe(false);
      expect(runInfos(taskDir).map((i) => [i.status, i.owner_epoch])).toEqual([
        ['failed', 2], // the job's agent, adopted and closed by the new owner
        ['completed', 2],
      ]);
    } finally {
      writeFileSync(release, '');
      if (processAlive(pid)) process.kill(pid, 'SIGCONT');
    }
  });
});
