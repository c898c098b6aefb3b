// The one place an AgentRegistry is constructed (test/arch forbids `new` of it elsewhere).
import { AgentRegistry } from './agent-registry';

/** Injection token of the agent registry (override it in a Nest testing module). */
export const AGENT_REGISTRY = Symbol('AGENT_REGISTRY');

export function createAgentRegistry(): AgentRegistry {
  return new AgentRegistry();
}
