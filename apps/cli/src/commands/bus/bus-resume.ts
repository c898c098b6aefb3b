import { wakeTask } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { asCliError } from '../engine/job-common';
import { spawnTaskLoop, taskOfBus } from '../needs-input/task-bus';
import type { BusPostOptions } from './bus-flags';
import { PostIo, resolvePostBus, resolvePostScope } from './bus-post';

/**
 * `bus post --resume`: posts the message marked `resume` to the task bus, removes DONE and, when no
 * Ralph loop holds the task, starts one in the background (the message heads its first prompt).
 */
export async function runBusResume(opts: BusPostOptions, io: PostIo): Promise<void> {
  try {
    if (opts.link?.length) throw new UsageError('--link cannot be used with --resume');
    const busPath = resolvePostBus(opts, io);
    const { root } = taskOfBus(busPath);
    const scope = resolvePostScope(opts, busPath, io);
    if (!scope.project || !scope.task) throw new UsageError('--resume needs a task: give --project and --task');
    let body = opts.body ?? '';
    if (body === '') body = io.readStdin() ?? '';
    const woken = await wakeTask({ root, projectId: scope.project, taskId: scope.task, body, type: opts.type, runId: opts.run, parents: opts.parent });
    io.stdout.write(`msg_id: ${woken.message.msg_id}\n`);
    if (woken.loopRunning) {
      io.stdout.write('resume: the running Ralph loop picks the message up\n');
      return;
    }
    const pid = spawnTaskLoop(root, scope.project, scope.task, woken.agent);
    io.stdout.write(`resume: started a Ralph loop (pid ${pid ?? '?'})\n`);
  } catch (err) {
    throw asCliError(err);
  }
}
