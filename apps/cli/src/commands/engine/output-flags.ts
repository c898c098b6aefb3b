/**
 * The flags of `run-agent output`, declared once for OutputCommand and the Nest-free hot path
 * (apps/cli/src/fast). Only type imports besides other flag files.
 */
import type { FlagSpec } from '@app/boot';
import { SCOPE_FLAGS, type ScopeFlags } from './support/scope-flags';

/** `output`'s own flags (it also takes SCOPE_FLAGS from its base class). */
export const OUTPUT_OWN_FLAGS = {
  runDir: { flags: '--run-dir <dir>', type: 'string', description: 'run folder to read (overrides --root/--project/--task/--run)' },
  run: { flags: '--run <id>', type: 'string', description: 'run id (default: the newest run folder)' },
  tail: { flags: '--tail <n>', type: 'string', description: 'print only the last N lines (0 = all; ignored with --follow)' },
  file: { flags: '--file <name>', type: 'string', description: 'which file: output (output.md, else agent-stdout.txt), stdout, stderr, prompt' },
  follow: { flags: '-f, --follow', type: 'boolean', description: 'stream the live file until the run ends, 60 s pass without new output, or Ctrl-C' },
} as const satisfies Record<string, FlagSpec>;

/** Every flag `output` takes. */
export const OUTPUT_FLAGS = { ...SCOPE_FLAGS, ...OUTPUT_OWN_FLAGS } as const satisfies Record<string, FlagSpec>;

export interface OutputOptions extends ScopeFlags {
  runDir?: string;
  run?: string;
  tail?: string;
  file?: string;
  follow?: boolean;
}
