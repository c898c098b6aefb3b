import { hasDoneFile, LivenessProbe, readRunInfoIfExists, reconcileRunInfo, synthesizeRunInfo, taskDirOfRunInfo, validateProjectId, validateTaskId, type RunInfo, type RunLiveness } from '@app/storage';
import { validateHostId } from './subjects';

/** Core NATS subject of a worker's heartbeat (not stored: only the latest one matters). */
export const heartbeatSubject = (host: string) => `conductor.heartbeat.${host}`;

/** What a worker says every lease/3: it is alive and runs these tasks (`<project>/<task>`). */
export interface Heartbeat {
  host: string;
  tasks: string[];
  leaseMs: number;
}

/** The one validator of heartbeats (hosts and task keys as on disk); undefined for anything else. */
export function decodeHeartbeat(data: Uint8Array): Heartbeat | undefined {
  try {
    const o = JSON.parse(Buffer.from(data).toString('utf8')) as Heartbeat;
    validateHostId(o.host);
    if (!Array.isArray(o.tasks) || !Number.isInteger(o.leaseMs) || o.leaseMs < 1) return undefined;
    for (const key of o.tasks) {
      const [p, t, rest] = String(key).split('/');
      if (rest !== undefined) return undefined;
      validateProjectId(p);
      validateTaskId(t);
    }
    return { host: o.host, tasks: o.tasks, leaseMs: o.leaseMs };
  } catch {
    return undefined;
  }
}

/**
 * The server's view of the workers: a task is alive while a worker whose last heartbeat is
 * younger than its lease lists it. A task no heartbeat has listed yet counts as alive until one
 * lease has passed since the server started (the first heartbeats are on their way).
 */
export class HeartbeatTable {
  private readonly hosts = new Map<string, { at: number; tasks: Set<string>; leaseMs: number }>();
  private readonly startedAt: number;

  constructor(
    private readonly graceMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  record(hb: Heartbeat): void {
    this.hosts.set(hb.host, { at: this.now(), tasks: new Set(hb.tasks), leaseMs: hb.leaseMs });
  }

  taskAlive(projectId: string, taskId: string): boolean {
    const now = this.now();
    const key = `${projectId}/${taskId}`;
    let listed = false;
    for (const h of this.hosts.values()) {
      if (!h.tasks.has(key)) continue;
      if (now - h.at <= h.leaseMs) return true;
      listed = true;
    }
    return !listed && now - this.startedAt < this.graceMs;
  }
}

/**
 * Liveness of a replicated run: its processes are on a worker host, so a pid here means nothing;
 * the run is alive while its worker's heartbeat lists its task.
 */
export class HeartbeatLivenessProbe extends LivenessProbe {
  constructor(private readonly table: HeartbeatTable) {
    super();
  }

  override isRunAlive(info: RunLiveness): boolean {
    const run = info as RunInfo;
    return this.table.taskAlive(run.project_id, run.task_id);
  }
}

/**
 * A replicated run-info as the server shows it: a `running` run whose worker stopped sending
 * heartbeats reads as failed. Never written back: the replica has one writer, the worker.
 */
export function readReplicaRunInfo(path: string, probe: LivenessProbe): RunInfo {
  const info = readRunInfoIfExists(path);
  if (!info) return synthesizeRunInfo(path);
  return replicaRunView(info, taskDirOfRunInfo(path), probe);
}

/** The same judgement for a run-info already read (the REST lists, through the storage index); a copy, never written. */
export function replicaRunView(info: RunInfo, taskDir: string | undefined, probe: LivenessProbe): RunInfo {
  if (info.status !== 'running') return info;
  const view = { ...info };
  reconcileRunInfo(view, taskDir ? hasDoneFile(taskDir) : false, probe);
  return view;
}
