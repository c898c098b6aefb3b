import { Module } from '@nestjs/common';
import { AgentsModule } from '@app/agents';
import { MessageBusModule } from '@app/messagebus';
import { RunnerModule } from '@app/runner';
import { StorageModule } from '@app/storage';
import { WebhookModule } from '@app/webhook';
import { busCommands } from './commands/bus';
import { completionCommands } from './commands/completion';
import { engineCommands } from './commands/engine';
import { inspectCommands } from './commands/inspect';
import { mcpCommands } from './commands/mcp';
import { needsInputCommands } from './commands/needs-input';
import { orchestrationCommands } from './commands/orchestration';
import { serverCommands } from './commands/server';

/**
 * The lib modules of the CLI (the same services as the server's ApiModule). The runs root and
 * config are per command (--root, --config), so StorageModule gives a StorageIndex factory rather
 * than one index, and webhook settings come from each job's config. The root-task planner is the
 * server's queue: `run-agent serve` starts ApiModule, which imports PlannerModule.
 */
export const CLI_LIB_MODULES = [
  StorageModule.forRoot(),
  MessageBusModule.forRoot(),
  AgentsModule.forRoot(),
  // a SIGINT'ed `run-agent task` stops the agents it started
  RunnerModule.forRoot({ stopOnShutdown: true }),
  WebhookModule.forRoot(),
];

@Module({
  imports: CLI_LIB_MODULES,
  providers: [...busCommands, ...inspectCommands, ...engineCommands, ...serverCommands, ...completionCommands, ...orchestrationCommands, ...needsInputCommands, ...mcpCommands],
})
export class CliModule {}
