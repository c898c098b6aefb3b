import type { Provider } from '@nestjs/common';
import { goalWorkflowClientCommands } from './client/goal-workflow.commands';
import { ServerJobCommand, ServerJobListCommand, ServerJobSubmitCommand } from './client/job.commands';
import { ServerProjectCommand, ServerProjectDeleteCommand, ServerProjectGcCommand, ServerProjectListCommand, ServerProjectStatsCommand } from './client/project.commands';
import { ServerGroupCommand } from './client/server-group.command';
import { ServerStatusCommand, ServerUpdateCommand, ServerUpdateStartCommand, ServerUpdateStatusCommand } from './client/status.commands';
import {
  ServerTaskCommand,
  ServerTaskDeleteCommand,
  ServerTaskListCommand,
  ServerTaskLogsCommand,
  ServerTaskPullRequestCommand,
  ServerTaskResumeCommand,
  ServerTaskRunsCommand,
  ServerTaskStatusCommand,
  ServerTaskStopCommand,
} from './client/task.commands';
import { ServerBusCommand, ServerBusPostCommand, ServerBusReadCommand, ServerWatchCommand } from './client/watch-bus.commands';
import { ServeCommand } from './serve/serve.command';

/** serve and the 'server …' HTTP client group; also backs 'conductor <sub>' (owner: server work) */
export const serverCommands: Provider[] = [
  ServeCommand,
  ServerGroupCommand,
  ServerStatusCommand,
  ServerUpdateCommand,
  ServerUpdateStatusCommand,
  ServerUpdateStartCommand,
  ServerTaskCommand,
  ServerTaskStatusCommand,
  ServerTaskStopCommand,
  ServerTaskListCommand,
  ServerTaskDeleteCommand,
  ServerTaskResumeCommand,
  ServerTaskPullRequestCommand,
  ServerTaskLogsCommand,
  ServerTaskRunsCommand,
  ServerJobCommand,
  ServerJobSubmitCommand,
  ServerJobListCommand,
  ServerProjectCommand,
  ServerProjectListCommand,
  ServerProjectStatsCommand,
  ServerProjectGcCommand,
  ServerProjectDeleteCommand,
  ServerWatchCommand,
  ServerBusCommand,
  ServerBusReadCommand,
  ServerBusPostCommand,
  ...goalWorkflowClientCommands,
];
