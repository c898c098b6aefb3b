import { Command, CommandRunner } from 'nest-commander';
import { ServerMonitorCommand } from '../../orchestration/server-monitor.command';
import { ServerGoalCommand } from './goal-workflow.commands';
import { ServerWorkflowCommand } from './workflow.commands';
import { ServerJobCommand } from './job.commands';
import { ServerProjectCommand } from './project.commands';
import { ServerStatusCommand, ServerUpdateCommand } from './status.commands';
import { ServerTaskCommand } from './task.commands';
import { ServerBusCommand, ServerWatchCommand } from './watch-bus.commands';

/** `run-agent server …`: API clients of a running conductor server (cli-storage.md §1.25). */
@Command({
  name: 'server',
  description: 'Query and control a running conductor server (start one with `run-agent serve` or `conductor`)',
  subCommands: [ServerStatusCommand, ServerUpdateCommand, ServerTaskCommand, ServerJobCommand, ServerProjectCommand, ServerWatchCommand, ServerBusCommand, ServerMonitorCommand, ServerGoalCommand, ServerWorkflowCommand],
})
export class ServerGroupCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}

