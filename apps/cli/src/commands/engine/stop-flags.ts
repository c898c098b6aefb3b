/**
 * The flags of `run-agent stop`, declared once for StopCommand and the Nest-free hot path
 * (apps/cli/src/fast). Only type imports besides other flag files.
 */
import type { FlagSpec } from '@app/boot';
import { SCOPE_FLAGS, type ScopeFlags } from './support/scope-flags';

/** `stop`'s own flags (it also takes SCOPE_FLAGS from its base class). */
export const STOP_OWN_FLAGS = {
  runDir: { flags: '--run-dir <dir>', type: 'string', description: 'run folder to stop' },
  run: { flags: '--run <id>', type: 'string', description: 'stop only this run of the task (and its sub-agent runs); default: the whole task' },
  grace: { flags: '--grace <duration>', type: 'string', description: 'wait this long after SIGTERM before SIGKILL (default 30s)' },
  force: { flags: '--force', type: 'boolean', description: 'accepted for compatibility: SIGKILL always follows the grace period' },
  noRestart: { flags: '--no-restart', type: 'boolean', description: 'write a permanent STOP-REQUESTED marker (monitor never restarts the task)' },
} as const satisfies Record<string, FlagSpec>;

/** Every flag `stop` takes. */
export const STOP_FLAGS = { ...SCOPE_FLAGS, ...STOP_OWN_FLAGS } as const satisfies Record<string, FlagSpec>;

export interface StopFlags extends ScopeFlags {
  runDir?: string;
  run?: string;
  force?: boolean;
  noRestart?: boolean;
  restart?: boolean;
  grace?: string;
}
