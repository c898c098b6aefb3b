import * as fs from 'node:fs';
import * as path from 'node:path';
import { BusMessage, BusWriter, readMessages } from '@app/messagebus';
import type { RunsLayout } from '@app/storage';
import { badRequest, conflict, notFound } from '../common/api-error';
import { formatTime } from '../common/go-format';
import { checkId } from '../common/ids';
import type { ThreadParentDto } from './dto/create-task.dto';

const ALLOWED_PARENT_TYPES = ['QUESTION', 'FACT'];

/** Validates a thread_parent (api.md §A.4) and returns the parent message. */
export function resolveThreadParent(layout: RunsLayout, tp: ThreadParentDto): BusMessage {
  const projectId = checkId(tp.project_id, 'thread_parent.project_id');
  const taskId = checkId(tp.task_id, 'thread_parent.task_id');
  const messageId = checkId(tp.message_id, 'thread_parent.message_id');
  if (!tp.run_id?.trim()) throw badRequest('thread_parent.run_id is required');
  const taskDir = layout.taskDir(projectId, taskId);
  if (!fs.existsSync(taskDir)) throw notFound('parent task not found');
  const bus = layout.taskBus(projectId, taskId);
  const msg = fs.existsSync(bus) ? readMessages(bus).find((m) => m.msg_id === messageId) : undefined;
  if (!msg) throw notFound('parent message not found');
  if (msg.project_id && msg.project_id !== projectId) throw badRequest('parent message project does not match thread_parent.project_id');
  if (msg.task_id && msg.task_id !== taskId) throw badRequest('parent message task does not match thread_parent.task_id');
  if (!msg.run_id) throw badRequest('parent message has no source run id');
  if (msg.run_id !== tp.run_id.trim()) throw badRequest('parent message run does not match thread_parent.run_id');
  if (!ALLOWED_PARENT_TYPES.includes(msg.type)) {
    throw conflict(`parent message type "${msg.type}" is not supported`, { allowed_parent_types: ALLOWED_PARENT_TYPES.join(',') });
  }
  return msg;
}

/** Writes TASK-THREAD-LINK.yaml and the two USER_REQUEST messages that tie child and parent. */
export async function writeThreadLink(
  layout: RunsLayout,
  child: { projectId: string; taskId: string; runId: string; prompt: string },
  parent: BusMessage,
): Promise<BusWriter[]> {
  const taskDir = layout.taskDir(child.projectId, child.taskId);
  const yaml = [
    `parent_project_id: ${parent.project_id}`,
    `parent_task_id: ${parent.task_id}`,
    `parent_run_id: ${parent.run_id}`,
    `parent_message_id: ${parent.msg_id}`,
    `parent_message_type: ${parent.type}`,
    `linked_at: ${formatTime(new Date())}`,
    '',
  ].join('\n');
  fs.writeFileSync(path.join(taskDir, 'TASK-THREAD-LINK.yaml'), yaml);
  const meta = {
    thread_parent_project_id: parent.project_id,
    thread_parent_task_id: parent.task_id,
    thread_parent_run_id: parent.run_id,
    thread_parent_message_id: parent.msg_id,
    thread_child_project_id: child.projectId,
    thread_child_task_id: child.taskId,
    thread_child_run_id: child.runId,
  };
  const childMsg = await new BusWriter(layout.taskBus(child.projectId, child.taskId)).append({
    type: 'USER_REQUEST',
    project_id: child.projectId,
    task_id: child.taskId,
    run_id: child.runId,
    parents: [{ msg_id: parent.msg_id, kind: 'thread_answer', meta: { project_id: parent.project_id, task_id: parent.task_id, run_id: parent.run_id } }],
    meta: { ...meta, thread_direction: 'child_task' },
    body: child.prompt,
  });
  await new BusWriter(layout.taskBus(parent.project_id, parent.task_id)).append({
    type: 'USER_REQUEST',
    project_id: parent.project_id,
    task_id: parent.task_id,
    run_id: parent.run_id,
    parents: [{ msg_id: parent.msg_id, kind: 'thread_answer' }],
    meta: { ...meta, thread_child_message_id: childMsg.msg_id, thread_source_message_id: parent.msg_id, thread_direction: 'source_task' },
    body: `threaded user request opened child task ${child.projectId}/${child.taskId}`,
  });
  return [];
}
