export * from './mcp.types';
export { createConductorMcp, MCP_SERVER_NAME, type ConductorMcp } from './conductor-mcp-server';
export { JobStarter, type JobStarterOptions } from './job-starter';
export { DetachedJobStarter, MCP_JOB_LOG, type DetachedJobStarterOptions } from './detached-job-starter';
export { postMessage, readBus, messageJson, BUS_READ_DEFAULT_LIMIT, BUS_READ_MAX_LIMIT } from './bus-tools';
export { taskSummary, type TaskSummary, type TaskState, type RunSummary } from './task-state';
export { parseResourceUri, projectBusUri, taskBusUri, runOutputUri } from './resource-uris';
export { McpInputError } from './tool-result';
