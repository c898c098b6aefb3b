import type { BusWriters } from '@app/messagebus';
import type { AppConfig } from '@app/storage';
import type { ScaleoutServer } from '@app/scaleout';
import type { RunsLayout, StorageIndex } from '@app/storage';
import type { SseSettings } from '@app/streams';
import type { HostPolicy } from '../security/host-check';

/** Everything the server was started with, resolved once (injected as API_CONTEXT). */
export interface ApiContext {
  root: string;
  layout: RunsLayout;
  /** STORAGE_INDEX of StorageModule (filled in by CoreModule; the settings never construct one). */
  index: StorageIndex;
  /** MessageBusService.writers (filled in by CoreModule): the bus-writer factory with the server's settings. */
  writers: BusWriters;
  /** MessageBusService.systemWriters: for the server's own records (merge outcomes, notices), not posts. */
  systemWriters: BusWriters;
  config?: AppConfig;
  apiKey?: string;
  disableTaskStart: boolean;
  corsOrigins: string[];
  /** The Host allow-list every request is checked against (DNS rebinding, issue #29). */
  hostPolicy: HostPolicy;
  sse: SseSettings;
  startedAt: number;
  version: string;
  /** Base URL agents get as JRUN_CONDUCTOR_URL; filled in once the server listens. */
  conductorUrl?: string;
  /** Grace period of stop actions (D6). */
  stopGraceMs?: number;
  /** `--nats`: tasks go to worker hosts and this root is their replica (docs/scale-out.md). */
  scaleout?: ScaleoutServer;
}

export type { SseSettings } from '@app/streams';

/** What the server is started with, before the modules provide the injected parts. */
export type ApiSettings = Omit<ApiContext, 'index' | 'writers' | 'systemWriters'> & { index?: StorageIndex; writers?: BusWriters; systemWriters?: BusWriters };

export const API_CONTEXT = Symbol('API_CONTEXT');

export function sseSettings(config?: AppConfig, override?: Partial<SseSettings>): SseSettings {
  const sse = ((config as any)?.api?.sse ?? {}) as Record<string, number | undefined>;
  const positive = (v: number | undefined, d: number) => (typeof v === 'number' && v > 0 ? v : d);
  return {
    pollIntervalMs: override?.pollIntervalMs ?? positive(sse.poll_interval_ms, 500),
    discoveryIntervalMs: override?.discoveryIntervalMs ?? positive(sse.discovery_interval_ms, 1000),
    heartbeatIntervalMs: override?.heartbeatIntervalMs ?? positive(sse.heartbeat_interval_s, 30) * 1000,
    maxClientsPerRun: override?.maxClientsPerRun ?? positive(sse.max_clients_per_run, 10),
  };
}
