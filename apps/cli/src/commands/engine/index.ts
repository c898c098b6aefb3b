import type { Provider } from '@nestjs/common';
import { GcCommand } from './gc.command';
import { JobCommand } from './job.command';
import { JobBatchCommand } from './job-batch.command';
import { ResumeCommand } from './resume.command';
import { StopCommand } from './stop.command';
import { TaskCommand } from './task.command';
import { TaskCancelCommand } from './task-cancel.command';
import { TaskDeleteCommand } from './task-delete.command';
import { TaskResumeCommand } from './task-resume.command';
import { OutputSynthesizeCommand } from './output-synthesize.command';
import { OutputCommand } from './output.command';
import { ShellSetupCommand, ShellSetupInstallCommand, ShellSetupUninstallCommand } from './shell-setup.command';
import { StatusCommand } from './status.command';
import { WatchCommand } from './watch.command';
import { WrapCommand } from './wrap.command';
import { DiffCommand, MergeCommand } from './worktree.commands';
import { ApproveSetupCommand } from './approve-setup.command';

/** task, job, stop, resume, output, watch, status, gc, wrap, shell-setup (owner: runner work) */
export const engineCommands: Provider[] = [
  JobCommand,
  JobBatchCommand,
  TaskCommand,
  TaskResumeCommand,
  TaskDeleteCommand,
  TaskCancelCommand,
  StopCommand,
  ResumeCommand,
  StatusCommand,
  WatchCommand,
  OutputCommand,
  OutputSynthesizeCommand,
  GcCommand,
  DiffCommand,
  MergeCommand,
  ApproveSetupCommand,
  WrapCommand,
  ShellSetupCommand,
  ShellSetupInstallCommand,
  ShellSetupUninstallCommand,
];
