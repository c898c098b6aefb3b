import type { BusWriters } from '@app/messagebus';
import { seedTaskFiles, writeThreadChild } from '@app/runner';
import type { RunsLayout } from '@app/storage';
import type { QueuedTask } from './task-message';

/**
 * Creates a queued task's files on the worker, from its submission (the server writes nothing
 * into its replica): the same files, in the same order, as POST /api/v1/tasks writes on a
 * single host (the runner's one seedTaskFiles). Repeating it (a redelivery, a takeover) changes
 * nothing already there but the stop markers an explicit resume clears.
 */
export async function prepareQueuedTask(parts: { layout: RunsLayout; writers: BusWriters }, taskDir: string, task: QueuedTask): Promise<void> {
  seedTaskFiles(taskDir, { prompt: task.prompt, resume: task.resume, dependsOn: task.dependsOn, settings: task.settings });
  if (task.thread) {
    const child = { projectId: task.projectId, taskId: task.taskId, runId: task.runId, prompt: task.prompt };
    await writeThreadChild(parts, child, task.thread.parent, { linkedAt: task.thread.linkedAt, msgId: task.thread.childMsgId });
  }
}
