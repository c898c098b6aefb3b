import { readdirSync, existsSync } from 'node:fs';
import { readRunInfo, runInfoIn, taskRunsDir, updateRunInfo } from '@app/storage';
import { applyRecord, decodeRecord } from './change-record';
import { admitRecord, EpochFloors } from './epochs';
import { nanos, natsClient, type NatsLink } from './nats';
import { CHANGES_STREAM, parseChangeSubject } from './subjects';

/** What a replay did: records applied, and every file the stream holds (its relative path), whether or not it changed here. */
export interface Replayed {
  applied: number;
  paths: Set<string>;
}

/**
 * Rebuilds a task's files under `root` from the change stream (every host's records of it, in
 * stream order): how a worker continues a task whose previous host was lost. Records of a host
 * whose claim is older than one already seen are skipped, like on the replica (epochs.ts).
 */
export async function replayTask(link: NatsLink, root: string, projectId: string, taskId: string): Promise<Replayed> {
  // an ephemeral consumer (NATS 2.9 pull consumers need explicit acks; ordered ones need 2.10)
  const info = await link.jsm.consumers.add(CHANGES_STREAM, {
    ack_policy: natsClient().jetstream.AckPolicy.Explicit,
    deliver_policy: natsClient().jetstream.DeliverPolicy.All,
    filter_subject: `conductor.changes.*.${projectId}.${taskId}`,
    inactive_threshold: nanos(60_000),
  });
  const consumer = await link.js.consumers.get(CHANGES_STREAM, info.name);
  let applied = 0;
  const paths = new Set<string>();
  const floors = new EpochFloors();
  try {
    if (info.num_pending === 0) return { applied, paths };
    for (;;) {
      const m = await consumer.next({ expires: 5000 });
      if (!m) break;
      const s = parseChangeSubject(m.subject);
      if (s) {
        try {
          const rec = decodeRecord(m.headers, m.data, s.projectId, s.taskToken);
          if (admitRecord(floors, s.host, s.projectId, s.taskToken, rec) && rec.op !== 'claim') {
            applyRecord(root, rec);
            applied++;
            if (rec.op === 'delete') paths.delete(rec.path);
            else paths.add(rec.path);
          }
        } catch {
          // records before this one aged out of the stream (retention): continue with what remains
        }
      }
      m.ack();
      if (m.info.pending === 0) break;
    }
  } finally {
    await link.jsm.consumers.delete(CHANGES_STREAM, info.name).catch(() => undefined);
  }
  return { applied, paths };
}

/** Runs the lost host left `running` are failed: their processes are not on this host. */
export async function failOrphanRuns(taskDir: string, host: string): Promise<number> {
  const runs = taskRunsDir(taskDir);
  if (!existsSync(runs)) return 0;
  let n = 0;
  for (const id of readdirSync(runs)) {
    const file = runInfoIn(runs, id);
    if (!existsSync(file)) continue;
    if (readRunInfo(file).status !== 'running') continue;
    await updateRunInfo(file, (info) => {
      info.status = 'failed';
      info.end_time = new Date();
      info.exit_code = -1;
      info.error_summary = `worker host lost; task continued on ${host}`;
    });
    n++;
  }
  return n;
}
