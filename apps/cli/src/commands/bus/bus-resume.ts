import type { BusWriters } from '@app/messagebus';
import { checkTaskStart, isTaskLoopRunning, latestRootRunOf, wakeTask } from '@app/runner';
import type { StorageIndexFactory } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { agentCallerEnv, loadRunConfig } from '../engine/job-common';
import { startTaskLoop, taskOfBus } from '../needs-input/task-bus';
import { withConfigFlag, type BusPostOptions } from './bus-flags';
import { PostIo, resolvePostBus, resolvePostScope } from './bus-post';

/**
 * `bus post --resume`: posts the message marked `resume` to the task bus, removes DONE and, when no
 * Ralph loop holds the task, starts one in the background (the message heads its first prompt)
 * with the task's own agent, this command's config and runs root. The start is checked first (config,
 * agent: nothing is written when it cannot succeed) and awaited: a loop that still does not start
 * is an error (exit 1) and DONE is put back.
 */
export async function runBusResume(opts: BusPostOptions, rawIo: PostIo, parts: { indexFor: StorageIndexFactory; writers: BusWriters }): Promise<void> {
  if (opts.link?.length) throw new UsageError('--link cannot be used with --resume');
  const io = withConfigFlag(rawIo, opts.config);
  const busPath = resolvePostBus(opts, io);
  const { root, taskDir } = taskOfBus(busPath);
  const scope = resolvePostScope(opts, busPath, io);
  if (!scope.project || !scope.task) throw new UsageError('--resume needs a task: give --project and --task');
  let body = opts.body ?? '';
  if (body === '') body = io.readStdin() ?? '';
  // the config this command uses is the loop's (absolute: the loop runs in the task folder)
  const loaded = loadRunConfig(opts.config, io.env);
  const last = latestRootRunOf(taskDir);
  const start = { root, projectId: scope.project, taskId: scope.task, agent: last.agent, configPath: loaded.path, cwd: last.cwd };
  if (!body.trim()) throw new UsageError('message body is empty: pass --body <text> or pipe it on stdin');
  // a loop that cannot start (no such agent, no binary) is refused before anything is written
  if (!isTaskLoopRunning(taskDir)) await checkTaskStart({ config: loaded.config, agent: start.agent, taskDir, env: agentCallerEnv(loaded), cwd: start.cwd ?? taskDir });
  const woken = await wakeTask({ layout: parts.indexFor(root).layout, writers: parts.writers, projectId: scope.project, taskId: scope.task, body, type: opts.type, runId: opts.run, parents: opts.parent, reversible: true });
  io.stdout.write(`msg_id: ${woken.message.msg_id}\n`);
  if (woken.loopRunning) {
    woken.settle();
    io.stdout.write('resume: the running Ralph loop picks the message up\n');
    return;
  }
  let pid: number;
  try {
    pid = await startTaskLoop(start);
  } catch (err) {
    woken.undo();
    throw err;
  }
  woken.settle();
  io.stdout.write(`resume: started a Ralph loop (pid ${pid})\n`);
}
