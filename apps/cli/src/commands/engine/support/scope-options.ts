import { CommandRunner, Option } from 'nest-commander';

/** The flags of the shared scope (issue #12 item 5). */
export interface ScopeFlags {
  root?: string;
  config?: string;
  project?: string;
  task?: string;
}

/**
 * `--root`, `--config`, `--project`, `--task`: declared once here and inherited by every command that
 * acts on a scope (nest-commander reads the decorators of a base class), so they take the same
 * flags with the same meaning. `--config` only matters where the config decides something (the
 * runs root via storage.runs_dir, agents for the commands that run them).
 */
export abstract class ScopeOptionParsers extends CommandRunner {
  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id (default: from $JRUN_* variables or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task id task-YYYYMMDD-HHMMSS-slug (default: from $JRUN_* variables or the working directory)' })
  parseTask(v: string): string {
    return v;
  }
}
