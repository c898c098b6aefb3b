import type { BusMessage, MessageParent } from '../api/types';

export interface MessageThread {
  message: BusMessage;
  replies: MessageThread[];
}

/** Parent ids of a message, accepting SSE (strings), REST ({msg_id}) and upstream Go ({MsgID}) forms. */
export function parentIds(message: BusMessage): string[] {
  const out: string[] = [];
  for (const p of message.parents ?? []) {
    const id = typeof p === 'string' ? p : (p as Exclude<MessageParent, string>).msg_id ?? (p as Exclude<MessageParent, string>).MsgID;
    if (id) out.push(id);
  }
  return out;
}

/**
 * Threads messages by their first known parent: replies sit under the message they answer, in
 * time order; messages whose parents are unknown (or form a loop) start their own thread.
 * Duplicates (same msg_id, e.g. REST + SSE) are kept once.
 */
export function threadMessages(messages: readonly BusMessage[]): MessageThread[] {
  const unique = mergeMessages([], messages);
  const nodes = new Map<string, MessageThread>();
  for (const m of unique) nodes.set(m.msg_id, { message: m, replies: [] });
  const roots: MessageThread[] = [];
  for (const m of unique) {
    const node = nodes.get(m.msg_id)!;
    const parentId = parentIds(m).find((id) => id !== m.msg_id && nodes.has(id));
    const parent = parentId ? nodes.get(parentId) : undefined;
    if (parent && !isAncestor(node, parent, nodes)) parent.replies.push(node);
    else roots.push(node);
  }
  return roots;
}

function isAncestor(candidate: MessageThread, of: MessageThread, nodes: Map<string, MessageThread>): boolean {
  const seen = new Set<string>();
  let current: MessageThread | undefined = of;
  while (current && !seen.has(current.message.msg_id)) {
    if (current === candidate) return true;
    seen.add(current.message.msg_id);
    const pid: string | undefined = parentIds(current.message).find((id) => nodes.has(id));
    current = pid ? nodes.get(pid) : undefined;
  }
  return false;
}

/** Adds new messages to a list, dropping duplicates, ordered by msg_id (lexically time-ordered). */
export function mergeMessages(existing: readonly BusMessage[], incoming: readonly BusMessage[]): BusMessage[] {
  const byId = new Map<string, BusMessage>();
  for (const m of existing) byId.set(m.msg_id, m);
  for (const m of incoming) if (m && m.msg_id) byId.set(m.msg_id, m);
  return [...byId.values()].sort(compareMessages);
}

function compareMessages(a: BusMessage, b: BusMessage): number {
  const ta = Date.parse(a.timestamp) || 0;
  const tb = Date.parse(b.timestamp) || 0;
  if (ta !== tb) return ta - tb;
  return a.msg_id < b.msg_id ? -1 : a.msg_id > b.msg_id ? 1 : 0;
}

/** Keeps threads that contain a message of the type (a thread is kept whole for context). */
export function filterThreads(threads: readonly MessageThread[], type: string): MessageThread[] {
  if (!type) return [...threads];
  const contains = (t: MessageThread): boolean => (t.message.type ?? '') === type || t.replies.some(contains);
  return threads.filter(contains);
}

export function messageTypes(messages: readonly BusMessage[]): string[] {
  return [...new Set(messages.map((m) => m.type ?? '').filter(Boolean))].sort();
}

const ABS_PATH = /(^|[\s('"=:])(\/[^\s'")]+)/g;

/**
 * Absolute paths in a message body (FACT messages list the task bus, DONE file and output paths)
 * shown relative to the project: paths under the project root lose that prefix, paths in the
 * runs tree are cut to start at the project's own directory (`<project>/task-…/…`).
 */
export function shortenPaths(body: string, project: string, projectRoot?: string): string {
  const root = projectRoot?.replace(/\/+$/, '');
  const marker = `/${project}/`;
  return body.replace(ABS_PATH, (whole, lead: string, path: string) => {
    if (root && (path === root || path.startsWith(`${root}/`))) return `${lead}${path.slice(root.length + 1) || '.'}`;
    const at = path.indexOf(marker);
    if (at >= 0) return `${lead}${path.slice(at + marker.length)}`;
    return whole;
  });
}
