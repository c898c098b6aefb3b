export { ScaleoutError, validateHostId, TASKS_STREAM, CHANGES_STREAM, CONTROL_STREAM } from './subjects';
export { connectNats, validateNatsUrl, publishDurably, DEFAULT_LEASE_MS, type NatsLink, type LinkOptions } from './nats';
export { applyRecord, decodeRecord, recordHeaders, type ChangeRecord, type ChangeOp } from './change-record';
export { ChangeTailer, type PublishRecord } from './change-tailer';
export { decodeQueuedTask, decodeControl, submissionId, type QueuedTask, type ControlMessage } from './task-message';
export { replayTask, failOrphanRuns } from './replay';
export { Worker, type WorkerOptions } from './worker';
export { ScaleoutServer, type ReplicaEvent } from './replica';
export { ReplicaLivenessProbe } from './replica-probe';
