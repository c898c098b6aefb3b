import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readMessages, type BusMessage, type BusWriters, type NewMessage } from '@app/messagebus';
import { type RunsLayout, writeFileAtomic } from '@app/storage';

/** The parent message a threaded task answers (api.md §A.4). */
export interface ThreadParentRef {
  project_id: string;
  task_id: string;
  run_id: string;
  msg_id: string;
  type: string;
}

export interface ThreadChildRef {
  projectId: string;
  taskId: string;
  runId: string;
  prompt: string;
}

export const THREAD_LINK_FILE = 'TASK-THREAD-LINK.yaml';

function threadMeta(parent: ThreadParentRef, child: ThreadChildRef): Record<string, string> {
  return {
    thread_parent_project_id: parent.project_id,
    thread_parent_task_id: parent.task_id,
    thread_parent_run_id: parent.run_id,
    thread_parent_message_id: parent.msg_id,
    thread_child_project_id: child.projectId,
    thread_child_task_id: child.taskId,
    thread_child_run_id: child.runId,
  };
}

/**
 * The child's side of a thread link: TASK-THREAD-LINK.yaml and its USER_REQUEST message. With a
 * preset `msgId` (the parent's link message names it first, on another host) a repeated call
 * appends nothing.
 */
export async function writeThreadChild(
  parts: { layout: RunsLayout; writers: BusWriters },
  child: ThreadChildRef,
  parent: ThreadParentRef,
  opts: { linkedAt: string; msgId?: string },
): Promise<BusMessage> {
  const { layout } = parts;
  const taskDir = layout.taskDir(child.projectId, child.taskId);
  const busPath = layout.taskBus(child.projectId, child.taskId);
  const yaml = [
    `parent_project_id: ${parent.project_id}`,
    `parent_task_id: ${parent.task_id}`,
    `parent_run_id: ${parent.run_id}`,
    `parent_message_id: ${parent.msg_id}`,
    `parent_message_type: ${parent.type}`,
    `linked_at: ${opts.linkedAt}`,
    '',
  ].join('\n');
  mkdirSync(dirname(busPath), { recursive: true });
  const linkFile = join(taskDir, THREAD_LINK_FILE);
  if (!existsSync(linkFile)) writeFileAtomic(linkFile, yaml);
  const earlier = opts.msgId && existsSync(busPath) ? readMessages(busPath).find((m) => m.msg_id === opts.msgId) : undefined;
  if (earlier) return earlier;
  return parts.writers(busPath).append({
    msg_id: opts.msgId,
    type: 'USER_REQUEST',
    project_id: child.projectId,
    task_id: child.taskId,
    run_id: child.runId,
    parents: [{ msg_id: parent.msg_id, kind: 'thread_answer', meta: { project_id: parent.project_id, task_id: parent.task_id, run_id: parent.run_id } }],
    meta: { ...threadMeta(parent, child), thread_direction: 'child_task' },
    body: child.prompt,
  });
}

/** The parent's side: the USER_REQUEST on the parent's bus that names the child task and its message. */
export function threadParentMessage(parent: ThreadParentRef, child: ThreadChildRef, childMsgId: string): NewMessage & { meta: Record<string, string> } {
  return {
    type: 'USER_REQUEST',
    project_id: parent.project_id,
    task_id: parent.task_id,
    run_id: parent.run_id,
    parents: [{ msg_id: parent.msg_id, kind: 'thread_answer' }],
    meta: { ...threadMeta(parent, child), thread_child_message_id: childMsgId, thread_source_message_id: parent.msg_id, thread_direction: 'source_task' },
    body: `threaded user request opened child task ${child.projectId}/${child.taskId}`,
  };
}
