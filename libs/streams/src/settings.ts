/** The server's SSE settings (api.sse in the config; apps/api/src/common/api-context.ts resolves them). */
export interface SseSettings {
  pollIntervalMs: number;
  discoveryIntervalMs: number;
  heartbeatIntervalMs: number;
  maxClientsPerRun: number;
}
