import type { Provider } from '@nestjs/common';
import { FactsCommand, FactsPromoteCommand } from './facts.command';
import { GoalCommand, GoalDecomposeCommand } from './goal.command';
import { GoalRunCommand } from './goal-run.command';
import { IterateCommand } from './iterate.command';
import { MonitorCommand } from './monitor.command';
import { ProjectCommand, ProjectInitCommand } from './project.command';
import { ReviewCommand, ReviewQuorumCommand } from './review.command';
import { ServerMonitorCommand } from './server-monitor.command';
import { WorkflowCommand, WorkflowRunCommand } from './workflow.command';

/**
 * goal, review, facts, project, iterate, workflow, monitor, and `server monitor` (= `conductor
 * monitor`, listed as a subcommand of the server group) — owner: orchestration work.
 */
export const orchestrationCommands: Provider[] = [
  GoalCommand,
  GoalDecomposeCommand,
  GoalRunCommand,
  ReviewCommand,
  ReviewQuorumCommand,
  FactsCommand,
  FactsPromoteCommand,
  ProjectCommand,
  ProjectInitCommand,
  IterateCommand,
  WorkflowCommand,
  WorkflowRunCommand,
  MonitorCommand,
  ServerMonitorCommand,
];
