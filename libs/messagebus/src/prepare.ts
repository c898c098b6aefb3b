import { existsSync } from 'node:fs';
import { BusError } from './errors';
import { serializeEntry } from './format';
import { validateHeaderFields } from './header-fields';
import { formatTimestamp, MSG_ID_PATTERN, nextMessageId } from './msg-id';
import { MAX_BODY_BYTES, type BusMessage, type NewMessage } from './types';

/**
 * Archive name of a rotated bus: `<path>.<UTC YYYYMMDD-HHMMSS>.archived`; when that name is taken
 * (two rotations in one second) `-2`, `-3`, … is added to the stamp rather than overwriting it.
 */
export function archivePath(path: string, now: Date = new Date()): string {
  const iso = now.toISOString();
  const stamp = `${path}.${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}`;
  let candidate = `${stamp}.archived`;
  for (let n = 2; existsSync(candidate); n++) candidate = `${stamp}-${n}.archived`;
  return candidate;
}

/** Builds the stored message and its serialised entry; throws BusError on invalid input. */
export function prepareMessage(input: NewMessage, maxBodyBytes: number = MAX_BODY_BYTES): { msg: BusMessage; entry: string } {
  if (!input) throw new BusError('INVALID_MESSAGE', 'message is empty');
  validateHeaderFields(input);
  const type = input.type.trim();
  const body = input.body ?? '';
  if (typeof body !== 'string') throw new BusError('INVALID_MESSAGE', 'message body is not a string');
  const bodyBytes = Buffer.byteLength(body);
  if (bodyBytes > maxBodyBytes) {
    throw new BusError(
      'TOO_LARGE',
      `message body is ${bodyBytes} bytes, over the ${maxBodyBytes}-byte limit; put large content in a file and reference it in links`,
    );
  }
  const id = nextMessageId();
  if (input.msg_id !== undefined) {
    if (typeof input.msg_id !== 'string' || !MSG_ID_PATTERN.test(input.msg_id)) throw new BusError('INVALID_MESSAGE', `invalid msg_id ${JSON.stringify(input.msg_id)}`);
    id.msgId = input.msg_id;
  }
  let ts = id.ts;
  let tsText = id.tsText;
  if (input.ts) {
    if (!(input.ts instanceof Date) || Number.isNaN(input.ts.getTime())) throw new BusError('INVALID_MESSAGE', 'message ts is not a valid date');
    ts = new Date(input.ts.getTime());
    tsText = formatTimestamp(ts);
  }
  const msg: BusMessage = {
    msg_id: id.msgId,
    ts,
    type,
    project_id: input.project_id,
    task_id: input.task_id ?? '',
    run_id: input.run_id ?? '',
    body,
  };
  const issueId = input.issue_id || (type === 'ISSUE' ? id.msgId : '');
  if (issueId) msg.issue_id = issueId;
  if (input.parents && input.parents.length > 0) msg.parents = input.parents;
  if (input.links && input.links.length > 0) msg.links = input.links;
  if (input.meta && Object.keys(input.meta).length > 0) msg.meta = input.meta;
  if (input.owner_epoch !== undefined) {
    if (!Number.isSafeInteger(input.owner_epoch) || input.owner_epoch < 1) throw new BusError('INVALID_MESSAGE', `invalid owner_epoch ${JSON.stringify(input.owner_epoch)}`);
    msg.owner_epoch = input.owner_epoch;
  }
  const entry = serializeEntry(
    {
      msgId: msg.msg_id,
      tsText,
      type: msg.type,
      projectId: msg.project_id,
      taskId: msg.task_id,
      runId: msg.run_id,
      issueId: msg.issue_id,
      parents: msg.parents,
      links: msg.links,
      meta: msg.meta,
      ownerEpoch: msg.owner_epoch,
    },
    body,
  );
  return { msg, entry };
}

/** The serialised ERROR entry a repair adds (quarantine.ts), in the scope of `context`'s message. */
export function errorEntry(body: string, context: Pick<BusMessage, 'project_id' | 'task_id' | 'run_id'>): string {
  return prepareMessage({ type: 'ERROR', project_id: context.project_id || 'unknown', task_id: context.task_id, run_id: context.run_id, body }).entry;
}
