import { DynamicModule, Module } from '@nestjs/common';
import { AgentRegistry } from './agent-registry';
import { AGENT_REGISTRY, createAgentRegistry } from './agents.providers';

const providers = [{ provide: AgentRegistry, useFactory: createAgentRegistry }, { provide: AGENT_REGISTRY, useExisting: AgentRegistry }];

/** Provides the agent backends' registry (AGENT_REGISTRY, also injectable by class). */
@Module({ providers, exports: [AgentRegistry, AGENT_REGISTRY] })
export class AgentsModule {
  /** Global to the app that imports it (the runner resolves agents through it). */
  static forRoot(): DynamicModule {
    return { module: AgentsModule, global: true, providers, exports: [AgentRegistry, AGENT_REGISTRY] };
  }
}
