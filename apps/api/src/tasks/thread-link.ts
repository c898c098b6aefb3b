import * as fs from 'node:fs';
import { BusMessage, readMessages } from '@app/messagebus';
import type { RunsLayout } from '@app/storage';
import { badRequest, conflict, notFound } from '../common/api-error';
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
