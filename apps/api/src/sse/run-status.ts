import { LivenessProbe, readRunInfoReconciled, type RunInfo } from '@app/storage';
import { readReplicaRunInfo } from '@app/scaleout';
import type { ApiContext } from '../common/api-context';

/**
 * How SSE reads a run's status: healed by the local pid probe, or with --nats (a replica) judged
 * by the owning worker's heartbeat and never written back (docs/scale-out.md "Liveness").
 */
export function runInfoReader(ctx: Pick<ApiContext, 'scaleout'>, probe: LivenessProbe): (path: string) => RunInfo {
  const scaleout = ctx.scaleout;
  if (scaleout) return (path) => readReplicaRunInfo(path, scaleout.liveness);
  return (path) => readRunInfoReconciled(path, probe);
}

/** With --nats a worker can go silent without any file changing: re-read the status this often. */
export const REPLICA_RECHECK_MS = 1000;
