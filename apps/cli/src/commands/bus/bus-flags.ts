/**
 * The flags of `bus post|read|discover`, shared by the nest-commander classes and by the
 * NestJS-free fast path (apps/cli/src/fast-path.ts), so there is one definition of each flag.
 * Keep this file free of NestJS imports.
 */
export interface FlagSpec {
  /** commander syntax, e.g. `--type <type>`; the long name is the parseArgs key. */
  flags: string;
  description: string;
  type: 'string' | 'boolean';
  multiple?: boolean;
  defaultValue?: string | boolean;
}

export const BUS_POST_FLAGS = {
  root: { flags: '--root <dir>', type: 'string', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' },
  type: { flags: '--type <type>', type: 'string', defaultValue: 'INFO', description: 'message type (FACT, PROGRESS, DECISION, ERROR, QUESTION, INFO, …)' },
  project: { flags: '--project <id>', type: 'string', description: 'project ID (inferred from $JRUN_* or the working directory if omitted)' },
  task: { flags: '--task <id>', type: 'string', description: 'task ID (posts to the task bus; inferred if omitted)' },
  run: { flags: '--run <id>', type: 'string', description: 'run ID stored in the message (inferred from $JRUN_RUN_FOLDER, run-info.yaml or $JRUN_ID)' },
  body: { flags: '--body <text>', type: 'string', description: 'message body (read from stdin when omitted and stdin is not a terminal; max 64 KiB)' },
  parent: { flags: '--parent <msg_id>', type: 'string', multiple: true, description: 'msg_id this message answers or continues (repeatable; threading)' },
  link: { flags: '--link <url>', type: 'string', multiple: true, description: 'URL or file path to attach by reference, e.g. a large log (repeatable)' },
} as const satisfies Record<string, FlagSpec>;

export const BUS_READ_FLAGS = {
  root: BUS_POST_FLAGS.root,
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
  type?: string;
  project?: string;
  task?: string;
  run?: string;
  body?: string;
  parent?: string[];
  link?: string[];
}

export interface BusReadOptions {
  root?: string;
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

/** The long name of a flag spec (`--tail <n>` → `tail`). */
export function longName(spec: FlagSpec): string {
  return /^--([a-z][a-z0-9-]*)/.exec(spec.flags)![1];
}
