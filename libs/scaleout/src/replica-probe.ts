import { LivenessProbe, type RunLiveness } from '@app/storage';

/**
 * Liveness on the server's replica: the processes of a replicated run live on a worker host, so
 * the server never judges them by its own pids (that would rewrite replicated run-info files);
 * the owning worker's run-info updates are the truth.
 */
export class ReplicaLivenessProbe extends LivenessProbe {
  override isRunAlive(_info: RunLiveness): boolean {
    return true;
  }
}
