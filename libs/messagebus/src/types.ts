import { GENERIC_BUS_FILE, PROJECT_BUS_FILE, TASK_BUS_FILE } from '@app/storage/layout-names';
export interface BusParent {
  msg_id: string;
  kind?: string;
  meta?: Record<string, string>;
}

/** A reference to something too big (or too binary) for a body: a file, a URL, an attachment. */
export interface BusLink {
  url: string;
  label?: string;
  kind?: string;
}

export interface BusMessage {
  msg_id: string;
  ts: Date;
  type: string;
  project_id: string;
  task_id: string;
  run_id: string;
  issue_id?: string;
  parents?: BusParent[];
  links?: BusLink[];
  meta?: Record<string, string>;
  /** Added header (issue #31): the owner epoch of the runner that wrote the record; upstream's yaml decoder ignores it. */
  owner_epoch?: number;
  body: string;
}

export type NewMessage = Omit<BusMessage, 'msg_id' | 'ts'> & {
  ts?: Date;
  /** An id generated ahead with newMessageId() (another host names the message before it is written); else a new one. */
  msg_id?: string;
};

/** Bus file names (cli-storage.md §4.1): defined once, in @app/storage. */
export { GENERIC_BUS_FILE, PROJECT_BUS_FILE, TASK_BUS_FILE };
export const BUS_FILE_NAMES = [TASK_BUS_FILE, PROJECT_BUS_FILE, GENERIC_BUS_FILE] as const;

/**
 * Default largest body accepted by BusWriter (16 MiB; upstream has no limit). Writers take
 * `maxBodyBytes` to change it (config `storage.max_message_body_bytes`, $CONDUCTOR_MAX_MESSAGE_BODY_BYTES,
 * `bus post --max-body-bytes`); bigger content belongs in a file referenced from `links`.
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
