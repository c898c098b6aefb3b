/**
 * The flags of `bus post|read|discover`, shared by the nest-commander classes and by the
 * NestJS-free fast path (apps/cli/src/fast-path.ts), so there is one definition of each flag.
 * Keep this file free of NestJS imports.
 */
import type { FlagSpec } from '@app/boot';

export { longName, optionKey, type FlagSpec } from '@app/boot';

export const BUS_POST_FLAGS = {
  root: { flags: '--root <dir>', type: 'string', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' },
  config: { flags: '--config <file>', type: 'string', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' },
  type: { flags: '--type <type>', type: 'string', defaultValue: 'INFO', description: 'message type (FACT, PROGRESS, DECISION, ERROR, QUESTION, INFO, …)' },
  project: { flags: '--project <id>', type: 'string', description: 'project ID (inferred from $JRUN_* or the working directory if omitted)' },
  task: { flags: '--task <id>', type: 'string', description: 'task ID (posts to the task bus; inferred if omitted)' },
  run: { flags: '--run <id>', type: 'string', description: 'run ID stored in the message (inferred from $JRUN_RUN_FOLDER, run-info.yaml or $JRUN_ID)' },
  body: { flags: '--body <text>', type: 'string', description: 'message body, taken as given even when it starts with a dash (read from stdin when omitted and stdin is not a terminal)' },
  maxBodyBytes: { flags: '--max-body-bytes <n>', type: 'string', description: 'largest accepted body in bytes (default: $CONDUCTOR_MAX_MESSAGE_BODY_BYTES, config storage.max_message_body_bytes, 16 MiB)' },
  allowEmpty: { flags: '--allow-empty', type: 'boolean', defaultValue: false, description: 'post an empty body (refused otherwise)' },
  parent: { flags: '--parent <msg_id>', type: 'string', multiple: true, description: 'msg_id this message answers or continues (repeatable; threading)' },
  link: { flags: '--link <url>', type: 'string', multiple: true, description: 'URL or file path to attach by reference, e.g. a large log (repeatable)' },
  resume: { flags: '--resume', type: 'boolean', description: 'wake the task: remove DONE and restart its Ralph loop (if none runs) with this message at the head of the prompt' },
} as const satisfies Record<string, FlagSpec>;

export const BUS_READ_FLAGS = {
  root: BUS_POST_FLAGS.root,
  config: BUS_POST_FLAGS.config,
  project: { flags: '--project <id>', type: 'string', description: 'project ID (without --task: the project bus)' },
  task: { flags: '--task <id>', type: 'string', description: 'task ID (the task bus)' },
  tail: { flags: '--tail <n>', type: 'string', defaultValue: '20', description: 'print the last N messages (0 = all)' },
  since: { flags: '--since <msg_id>', type: 'string', description: 'print only messages after this msg_id (the last --tail of them; --tail 0 for all)' },
  follow: { flags: '--follow', type: 'boolean', defaultValue: false, description: 'keep printing new messages until interrupted' },
  json: { flags: '--json', type: 'boolean', defaultValue: false, description: 'print one JSON object per message' },
} as const satisfies Record<string, FlagSpec>;

export const BUS_REPAIR_FLAGS = {
  root: BUS_POST_FLAGS.root,
  project: BUS_READ_FLAGS.project,
  task: BUS_READ_FLAGS.task,
} as const satisfies Record<string, FlagSpec>;

export interface BusRepairOptions {
  root?: string;
  project?: string;
  task?: string;
}

export const BUS_DISCOVER_FLAGS = {
  from: { flags: '--from <dir>', type: 'string', description: 'start searching from this directory (default: the working directory)' },
} as const satisfies Record<string, FlagSpec>;

export interface BusPostOptions {
  root?: string;
  config?: string;
  type?: string;
  project?: string;
  task?: string;
  run?: string;
  body?: string;
  maxBodyBytes?: string;
  allowEmpty?: boolean;
  parent?: string[];
  link?: string[];
  resume?: boolean;
}

export interface BusReadOptions {
  root?: string;
  config?: string;
  project?: string;
  task?: string;
  tail?: string | number;
  since?: string;
  follow?: boolean;
  json?: boolean;
}

export interface BusDiscoverOptions {
  from?: string;
}

/** `--config` names the config file for everything that reads one (as $CONDUCTOR_CONFIG does). */
export function withConfigFlag<T extends { env: NodeJS.ProcessEnv }>(io: T, config: string | undefined): T {
  return config?.trim() ? { ...io, env: { ...io.env, CONDUCTOR_CONFIG: config.trim() } } : io;
}
