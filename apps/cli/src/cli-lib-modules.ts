import type { DynamicModule } from '@nestjs/common';
import { AgentsModule } from '@app/agents';
import { MessageBusModule } from '@app/messagebus';
import { RunnerModule } from '@app/runner';
import { StorageModule } from '@app/storage';
import { WebhookModule } from '@app/webhook';

/**
 * The lib modules of the CLI (the same services as the server's ApiModule), imported by every
 * command module of cli.module.ts. The runs root and config are per command (--root, --config),
 * so StorageModule gives a StorageIndex factory rather than one index, and webhook settings come
 * from each job's config. The root-task planner is the server's queue: `run-agent serve` starts
 * ApiModule, which imports PlannerModule.
 */
export function cliLibModules(): DynamicModule[] {
  return [
    StorageModule.forRoot(),
    MessageBusModule.forRoot(),
    AgentsModule.forRoot(),
    // a SIGINT'ed `run-agent task` stops the agents it started
    RunnerModule.forRoot({ stopOnShutdown: true }),
    WebhookModule.forRoot(),
  ];
}
