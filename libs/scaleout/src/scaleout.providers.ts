// The one place the scale-out parts are constructed (test/arch forbids `new` of them elsewhere).
// The server builds its ScaleoutServer before Nest boots (it must fail fast when NATS is
// unreachable) and hands it to the modules in the API context; the liveness probe of a replica
// root goes to StorageModule as the probe of the server's StorageIndex.
import type { LinkOptions } from './nats';
import { ScaleoutServer, type ReplicaEvent } from './replica';
import { ReplicaLivenessProbe } from './replica-probe';
import { Worker, type WorkerOptions } from './worker';

export function createScaleoutServer(url: string, root: string, opts: LinkOptions & { log?: (line: string) => void; onApplied?: (e: ReplicaEvent) => void } = {}): ScaleoutServer {
  return new ScaleoutServer(url, root, opts);
}

/** Runs of a replica root belong to worker hosts: their processes are not on this host. */
export function createReplicaLivenessProbe(): ReplicaLivenessProbe {
  return new ReplicaLivenessProbe();
}

export function createWorker(opts: WorkerOptions): Worker {
  return new Worker(opts);
}
