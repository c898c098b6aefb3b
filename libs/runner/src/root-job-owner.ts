import { claimOwnerEpoch, type OwnerFence } from '@app/storage';
import { refuseLiveRootRun } from './live-run';
import { lockTask, taskLeaseMs } from './task-lock';

export interface RootJobOwner {
  fence: OwnerFence;
  release(): void;
}

/**
 * Issue #31: a root job run on its own (`run-agent job` outside a task loop) owns its task the way
 * a loop does while it runs: it holds TASK.lock (renewing the lease, $CONDUCTOR_TASK_LEASE_MS) and
 * claims an owner epoch (`claimed_by: job`), and its run-info and bus writes go through that
 * fence. A task whose loop (or another root job) holds the lock is refused at once (TASK_LOCKED),
 * so is one with a live agent of a runner that is gone;
 * `run-agent task resume --adopt` may take the task from a job that renewed nothing for a lease
 * (stopped, hung), and the job, woken, writes nothing more and signals nothing.
 */
export async function ownRootJob(taskDir: string, projectId: string, taskId: string): Promise<RootJobOwner> {
  const lock = await lockTask(taskDir, projectId, taskId, 0, { leaseMs: taskLeaseMs() });
  try {
    // the lock is free: a live agent left by a runner that is gone is refused (never two agents)
    refuseLiveRootRun(taskDir, projectId, taskId);
    const fence = claimOwnerEpoch(taskDir, 'job');
    return {
      fence,
      release: () => {
        lock.release();
        fence.close();
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}
