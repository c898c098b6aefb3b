import { Module } from '@nestjs/common';
import { busCommands } from './commands/bus';
import { completionCommands } from './commands/completion';
import { engineCommands } from './commands/engine';
import { inspectCommands } from './commands/inspect';
import { mcpCommands } from './commands/mcp';
import { needsInputCommands } from './commands/needs-input';
import { orchestrationCommands } from './commands/orchestration';
import { serverCommands } from './commands/server';
import { scaleoutCommands } from './commands/scaleout';
import { usageCommands } from './commands/usage';

@Module({ providers: [...busCommands, ...inspectCommands, ...engineCommands, ...serverCommands, ...completionCommands, ...orchestrationCommands, ...needsInputCommands, ...mcpCommands, ...scaleoutCommands, ...usageCommands] })
export class CliModule {}
