/**
 * `--root`, `--config`, `--project`, `--task`: the flags of the shared scope (issue #12 item 5),
 * declared once for the nest-commander classes (ScopeOptionParsers) and the Nest-free hot path
 * (apps/cli/src/fast). Plain module: no NestJS imports.
 */
import type { FlagSpec } from '@app/boot';

export const SCOPE_FLAGS = {
  root: { flags: '--root <dir>', type: 'string', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' },
  config: { flags: '--config <file>', type: 'string', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' },
  project: { flags: '--project <id>', type: 'string', description: 'project id (default: from $JRUN_* variables or the working directory)' },
  task: { flags: '--task <id>', type: 'string', description: 'task id task-YYYYMMDD-HHMMSS-slug (default: from $JRUN_* variables or the working directory)' },
} as const satisfies Record<string, FlagSpec>;

/** The flags of the shared scope. */
export interface ScopeFlags {
  root?: string;
  config?: string;
  project?: string;
  task?: string;
}
