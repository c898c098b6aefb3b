/**
 * The hot commands run on the plain composition root (plain-root.ts), without NestJS's container:
 * each with the flag specs its nest-commander class declares its options from, and the plain
 * function that class runs. Each command's body loads only when argv names it.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- each command's body loads only when argv names it */
import type { FlagSpec } from '@app/boot';
import { JOB_FLAGS, type JobFlags } from '../commands/engine/job-flags';
import { OUTPUT_FLAGS, type OutputOptions } from '../commands/engine/output-flags';
import { STATUS_FLAGS, type StatusOptions } from '../commands/engine/status-flags';
import { STOP_FLAGS, type StopFlags } from '../commands/engine/stop-flags';
import { TASK_FLAGS, type TaskFlags } from '../commands/engine/task-flags';
import { LIST_FLAGS, type ListOptions } from '../commands/inspect/list-flags';
import type { PlainSeams } from './plain-root';

export interface HotCommand {
  specs: Record<string, FlagSpec>;
  /** True: leave these options to nest-commander (`output --follow` keeps the Nest path's signal handling). */
  nestWhen?(options: Record<string, unknown>): boolean;
  run(options: Record<string, unknown>, seams: PlainSeams): Promise<void>;
}

/** Top-level command → its hot form (`run-agent` only; `conductor status|list` is the API client). */
export const HOT_COMMANDS: Readonly<Record<string, HotCommand>> = {
  status: {
    specs: STATUS_FLAGS,
    run: (options, seams) => (require('../commands/engine/status-run') as typeof import('../commands/engine/status-run')).runStatus(options as StatusOptions, seams),
  },
  list: {
    specs: LIST_FLAGS,
    run: (options, seams) => (require('../commands/inspect/list-run') as typeof import('../commands/inspect/list-run')).runList(options as ListOptions, seams),
  },
  output: {
    specs: OUTPUT_FLAGS,
    nestWhen: (options) => options.follow === true,
    run: (options, seams) => (require('../commands/engine/output-run') as typeof import('../commands/engine/output-run')).runOutput(options as OutputOptions, seams),
  },
  stop: {
    specs: STOP_FLAGS,
    run: (options, seams) => (require('../commands/engine/stop-run') as typeof import('../commands/engine/stop-run')).runStop(options as StopFlags, { runner: seams.runner(), indexFor: seams.indexFor, stdout: seams.stdout }),
  },
  task: {
    specs: TASK_FLAGS,
    run: (options, seams) => (require('../commands/engine/task-run') as typeof import('../commands/engine/task-run')).runTaskCommand(options as TaskFlags, { runner: seams.runner(), indexFor: seams.indexFor }),
  },
  job: {
    specs: JOB_FLAGS,
    run: (options, seams) => (require('../commands/engine/job-run') as typeof import('../commands/engine/job-run')).runJobCommand(options as JobFlags, { runner: seams.runner(), feed: seams.feed, indexFor: seams.indexFor, writers: seams.writers }),
  },
};
