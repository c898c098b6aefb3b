import { CommandRunner, Option } from 'nest-commander';
import { SCOPE_FLAGS } from './scope-flags';

export type { ScopeFlags } from './scope-flags';

/**
 * `--root`, `--config`, `--project`, `--task` (SCOPE_FLAGS): inherited by every command that acts
 * on a scope (nest-commander reads the decorators of a base class), so they take the same flags
 * with the same meaning. `--config` only matters where the config decides something (the runs root
 * via storage.runs_dir, agents for the commands that run them).
 */
export abstract class ScopeOptionParsers extends CommandRunner {
  @Option(SCOPE_FLAGS.root)
  parseRoot(v: string): string {
    return v;
  }

  @Option(SCOPE_FLAGS.config)
  parseConfig(v: string): string {
    return v;
  }

  @Option(SCOPE_FLAGS.project)
  parseProject(v: string): string {
    return v;
  }

  @Option(SCOPE_FLAGS.task)
  parseTask(v: string): string {
    return v;
  }
}
