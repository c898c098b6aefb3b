/**
 * The server's shared SSE streams without the HTTP layer (docs/architecture.md): run-log and bus
 * tails shared by every client, run discovery for the fan-in streams, the raw file tail, the push
 * channel, event builders and the drop-and-resync rule. apps/api provides the hubs and writes the
 * events (send-sse.ts, @Sse routes).
 */
export * from './settings';
export * from './sse-event';
export * from './channel';
export * from './resync';
export * from './sse-lifecycle.service';
export * from './run-log-hub';
export * from './bus-hub';
export * from './run-discovery';
export * from './file-stream';
export * from './run-streams';
