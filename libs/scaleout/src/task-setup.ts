import { mkdirSync } from 'node:fs';
import { hasSettings, writeTaskSettings, writeThreadChild } from '@app/runner';
import { clearStopMarkers, writeDependsOn, writeTaskPromptIfAbsent } from '@app/storage';
import type { QueuedTask } from './task-message';

/**
 * Creates a queued task's files on the worker, from its submission (the server writes nothing
 * into its replica): the same files, in the same order, as POST /api/v1/tasks writes on a
 * single host. Repeating it (a redelivery, a takeover) changes nothing already there but the
 * stop markers an explicit resume clears.
 */
export async function prepareQueuedTask(root: string, taskDir: string, task: QueuedTask): Promise<void> {
  mkdirSync(taskDir, { recursive: true });
  if (task.resume) clearStopMarkers(taskDir);
  if (task.dependsOn !== undefined) writeDependsOn(taskDir, task.dependsOn);
  if (task.settings && hasSettings(task.settings)) writeTaskSettings(taskDir, task.settings);
  writeTaskPromptIfAbsent(taskDir, task.prompt.endsWith('\n') ? task.prompt.slice(0, -1) : task.prompt);
  if (task.thread) {
    const child = { projectId: task.projectId, taskId: task.taskId, runId: task.runId, prompt: task.prompt };
    await writeThreadChild(root, child, task.thread.parent, { linkedAt: task.thread.linkedAt, msgId: task.thread.childMsgId });
  }
}
