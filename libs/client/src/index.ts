/**
 * The REST client of the conductor API (issue #32): the HTTP client (`ServerClient`, API key,
 * error wording), SSE reading, Go-style output formatting, and one function per client command
 * (`conductor task status`, `job submit`, `bus read`, …) that calls the API and prints the answer.
 * The nest-commander command classes in apps/cli declare the flags and call these.
 */
export * from './server-client';
export * from './sse';
export * from './format';
export * from './output';
export * from './logs';
export * from './tasks';
export * from './jobs';
export * from './projects';
export * from './status';
export * from './update';
export * from './watch-bus';
export * from './goal-workflow-plan';
export * from './goal-workflow';
export * from './server-monitor';
