import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { JsMsg } from '@nats-io/jetstream';
import { applyRecord, decodeRecord } from './change-record';
import { ensureConsumer, natsClient, type NatsLink } from './nats';
import { CHANGES_STREAM, parseChangeSubject, SERVER_HOST } from './subjects';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A worker's copy of the project buses gets the server's project-bus posts (`POST
 * /api/v1/messages` without a task: `_server` records of CONDUCTOR_CHANGES), so its agents read
 * them. A durable consumer per host (posts made while the worker was down arrive when it is back);
 * a post to a project the worker has no folder of is skipped (it holds none of its tasks). The
 * entries are appended once by msg_id; the worker's tailer publishes them back as its own
 * project-bus records, which the replica recognises by msg_id and appends nothing.
 */
export async function followServerPosts(link: NatsLink, root: string, host: string, stopping: () => boolean, log: (line: string) => void): Promise<void> {
  const durable = `server-posts-${host}`;
  await ensureConsumer(link.jsm, CHANGES_STREAM, {
    durable_name: durable,
    ack_policy: natsClient().jetstream.AckPolicy.Explicit,
    deliver_policy: natsClient().jetstream.DeliverPolicy.New,
    filter_subject: `conductor.changes.${SERVER_HOST}.>`,
  });
  const consumer = await link.js.consumers.get(CHANGES_STREAM, durable);
  while (!stopping()) {
    let m: JsMsg | null;
    try {
      m = await consumer.next({ expires: 1000 });
    } catch {
      await sleep(250);
      continue;
    }
    if (!m) continue;
    const s = parseChangeSubject(m.subject);
    try {
      if (s && existsSync(join(root, s.projectId))) {
        if (applyRecord(root, decodeRecord(m.headers, m.data, s.projectId, s.taskToken))) log(`server post appended to ${s.projectId}'s project bus`);
      }
    } catch (err) {
      log(`server post ${m.seq} dropped: ${(err as Error).message}`);
    }
    m.ack();
  }
}
