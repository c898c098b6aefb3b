import { Module } from '@nestjs/common';
import { AgentRegistry } from './agent-registry';

@Module({
  providers: [AgentRegistry],
  exports: [AgentRegistry],
})
export class AgentsModule {}
