import type * as TransportNode from '@nats-io/transport-node';
import type * as JetStream from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import { connectionAuth, type NatsAuth } from './auth';
import { CHANGES_STREAM, CLAIMS_STREAM, CONTROL_STREAM, ScaleoutError, TASKS_STREAM } from './subjects';

let loaded: { transport: typeof TransportNode; jetstream: typeof JetStream } | undefined;
/**
 * The NATS client, loaded on first use: every CLI command loads this lib through the command
 * tree, only `worker` and `--nats` need the client (~45 ms to load).
 */
export function natsClient(): { transport: typeof TransportNode; jetstream: typeof JetStream } {
  /* eslint-disable @typescript-eslint/no-require-imports */
  return (loaded ??= { transport: require('@nats-io/transport-node'), jetstream: require('@nats-io/jetstream') });
  /* eslint-enable @typescript-eslint/no-require-imports */
}

export type { MsgHdrs };
// transport-node re-exports nats-core through a subpath export TypeScript's node10 resolution
// cannot follow: the function is there at runtime, its types come from nats-core.
export const newHeaders = (): MsgHdrs => (natsClient().transport as unknown as { headers(): MsgHdrs }).headers();
/** JetStream durations are nanoseconds. */
export const nanos = (ms: number): number => ms * 1_000_000;

export interface NatsLink {
  nc: NatsConnection;
  /** The connected nats-server's version (its INFO). */
  serverVersion?: string;
  js: JetStreamClient;
  jsm: JetStreamManager;
  close(): Promise<void>;
}

export interface LinkOptions {
  /** JetStream deduplication window of task submissions (default 2 min). */
  dedupWindowMs?: number;
  /** Credentials and TLS (docs/scale-out.md "Authentication and TLS"). */
  auth?: NatsAuth;
  /** Bounds of the streams this client creates (docs/scale-out.md "Retention"). */
  retention?: Partial<Retention>;
}

/** Stream bounds: records older or beyond the size are dropped (a replica resyncs from a snapshot). */
export interface Retention {
  changesMaxAgeMs: number;
  changesMaxBytes: number;
  /** Queued tasks nobody pulled within this age are dropped; a full queue refuses submissions. */
  tasksMaxAgeMs: number;
  tasksMaxBytes: number;
  controlMaxAgeMs: number;
  controlMaxBytes: number;
  /** CONDUCTOR_CLAIMS (one small record per task; its max age is the tasks'). */
  claimsMaxBytes: number;
}

const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION: Retention = {
  changesMaxAgeMs: 7 * DAY_MS,
  changesMaxBytes: 8 * 1024 ** 3,
  tasksMaxAgeMs: 7 * DAY_MS,
  tasksMaxBytes: 1024 ** 3,
  controlMaxAgeMs: 3_600_000,
  controlMaxBytes: 256 * 1024 ** 2,
  claimsMaxBytes: 64 * 1024 ** 2,
};

export const DEFAULT_LEASE_MS = 30_000;
const RETRY_MS = 250;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * What a client can tell about JetStream's fsync (issue #31 "Durable acknowledgements"): a
 * client cannot read the server's `sync_interval` (only its monitoring port or system account
 * can), so the answer is always a warning: one line the server and workers log at start.
 * nats-server before 2.10 has no `sync_interval` (it fsyncs every 2 minutes, fixed); from 2.10 on
 * the documented configuration sets `jetstream { sync_interval: always }`.
 */
export function syncNote(version: string | undefined): string {
  const [major, minor] = String(version ?? '').split('.').map((n) => Number.parseInt(n, 10));
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return `cannot confirm that JetStream fsyncs every write: unknown nats-server version "${version ?? ''}"`;
  if (major < 2 || (major === 2 && minor < 10)) {
    return `cannot confirm that JetStream fsyncs every write: nats-server ${version} has no sync_interval (2.10+); it fsyncs every 2 minutes, so a power loss can lose acknowledged tasks, changes and writes`;
  }
  return `cannot confirm from a client that JetStream fsyncs every write: make sure nats-server ${version} runs with jetstream { sync_interval: always } (docs/scale-out.md)`;
}

/** Accepts nats:// (or tls://) URLs only, so a typo is one clear error instead of a hang. */
export function validateNatsUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ScaleoutError('NATS', `invalid NATS URL "${url}": expected nats://host:port`);
  }
  if (!['nats:', 'tls:'].includes(parsed.protocol) || !parsed.hostname) throw new ScaleoutError('NATS', `invalid NATS URL "${url}": expected nats://host:port`);
  return url;
}

/** Connects (reconnecting forever after a loss) and makes sure the three streams exist. */
export async function connectNats(url: string, name: string, opts: LinkOptions = {}): Promise<NatsLink> {
  validateNatsUrl(url);
  const { transport, jetstream: jsmod } = natsClient();
  const { DiscardPolicy, RetentionPolicy, StorageType } = jsmod;
  const r = { ...DEFAULT_RETENTION, ...opts.retention };
  // an unreachable server at start is one clear error; after that, reconnect forever
  let nc: NatsConnection;
  try {
    const credsAuthenticator = (transport as unknown as { credsAuthenticator: Parameters<typeof connectionAuth>[1] }).credsAuthenticator;
    nc = await transport.connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: RETRY_MS, timeout: 5000, ...connectionAuth(opts.auth, credsAuthenticator) });
  } catch (err) {
    throw new ScaleoutError('NATS', `cannot connect to NATS at ${url}: ${(err as Error).message}`);
  }
  const jsm = await jsmod.jetstreamManager(nc);
  await ensureStream(jsm, {
    name: TASKS_STREAM,
    subjects: ['conductor.tasks.>'],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(opts.dedupWindowMs ?? 120_000),
    max_age: nanos(r.tasksMaxAgeMs),
    max_bytes: r.tasksMaxBytes,
    discard: DiscardPolicy.New,
  });
  await ensureStream(jsm, {
    name: CHANGES_STREAM,
    subjects: ['conductor.changes.>'],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(r.changesMaxAgeMs),
    max_bytes: r.changesMaxBytes,
    discard: DiscardPolicy.Old,
  });
  await ensureStream(jsm, {
    name: CONTROL_STREAM,
    subjects: ['conductor.control.>'],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(r.controlMaxAgeMs),
    max_bytes: r.controlMaxBytes,
    discard: DiscardPolicy.Old,
  });
  await ensureStream(jsm, {
    name: CLAIMS_STREAM,
    subjects: ['conductor.claims.>'],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_msgs_per_subject: 1,
    max_age: nanos(r.tasksMaxAgeMs),
    max_bytes: r.claimsMaxBytes,
    discard: DiscardPolicy.Old,
  });
  return { nc, js: jsmod.jetstream(nc), jsm, serverVersion: nc.info?.version, close: () => nc.close() };
}

/**
 * Creates a stream, or bounds one an older version created without limits; limits an operator
 * set (`nats stream edit`) are kept.
 */
async function ensureStream(jsm: JetStreamManager, cfg: Partial<StreamConfig> & { name: string }): Promise<void> {
  let existing: StreamConfig;
  try {
    existing = (await jsm.streams.info(cfg.name)).config;
  } catch {
    await jsm.streams.add(cfg);
    return;
  }
  if (existing.max_age === 0 && existing.max_bytes === -1) {
    await jsm.streams.update(cfg.name, { ...existing, max_age: cfg.max_age ?? 0, max_bytes: cfg.max_bytes ?? -1 });
  }
}

export async function ensureConsumer(jsm: JetStreamManager, stream: string, cfg: Parameters<JetStreamManager['consumers']['add']>[1] & { durable_name: string }): Promise<void> {
  try {
    await jsm.consumers.info(stream, cfg.durable_name);
  } catch {
    await jsm.consumers.add(stream, cfg);
  }
}

/**
 * Publishes until JetStream stores it (retrying through a server restart). A retried message
 * carries the same msgID, so a publish whose ack was lost is not stored twice.
 */
export async function publishDurably(
  link: NatsLink,
  subject: string,
  data: Uint8Array | string,
  opts: { msgID?: string; headers?: MsgHdrs; signal?: AbortSignal } = {},
): Promise<{ duplicate: boolean; seq: number }> {
  for (;;) {
    try {
      const ack = await link.js.publish(subject, data, { msgID: opts.msgID, headers: opts.headers, timeout: 5000 });
      return { duplicate: ack.duplicate, seq: ack.seq };
    } catch (err) {
      if (link.nc.isClosed() || opts.signal?.aborted) throw new ScaleoutError('NATS', `publish to ${subject} failed: ${(err as Error).message}`);
      await sleep(RETRY_MS);
    }
  }
}
