import { CommandRunner, Option } from 'nest-commander';
import { validateTaskSettings, type TaskSettings } from '@app/runner';
import { countFlag } from './support/options';
import { RunFlags, optionalDuration } from './job-common';

export interface LoopFlags extends RunFlags {
  dependsOn?: string[];
  dependencyPollInterval?: string;
  maxRestarts?: string;
  childWaitTimeout?: string;
  childPollInterval?: string;
  restartDelay?: string;
  inputWait?: string;
  stallAfter?: string;
  killOnStall?: boolean;
  maxTokens?: string;
  maxCostUsd?: string;
  maxWallTime?: string;
  resumeMode?: string;
}

export interface LoopSettings {
  maxRestarts?: number;
  restartDelayMs?: number;
  childWaitTimeoutMs?: number;
  childPollIntervalMs?: number;
  dependencyPollIntervalMs?: number;
  idleTimeoutMs?: number;
  inputWaitMs?: number;
  stallAfterMs?: number;
  killOnStall?: boolean;
  budget?: TaskSettings;
}

/** --max-tokens, --max-cost-usd, --max-wall-time, --resume-mode: validated by the runner's one validator. */
export function budgetFlags(flags: { maxTokens?: string; maxCostUsd?: string; maxWallTime?: string; resumeMode?: string }): TaskSettings {
  return validateTaskSettings({ max_tokens: flags.maxTokens, max_cost_usd: flags.maxCostUsd, max_wall_time: flags.maxWallTime, resume_mode: flags.resumeMode });
}

/** Parses the Ralph-loop flags; bad values are usage errors. */
export function loopSettings(flags: LoopFlags, defaultMaxRestarts?: number): LoopSettings {
  return {
    maxRestarts: flags.maxRestarts !== undefined ? countFlag(flags.maxRestarts, '--max-restarts') : defaultMaxRestarts,
    restartDelayMs: optionalDuration(flags.restartDelay, '--restart-delay'),
    childWaitTimeoutMs: optionalDuration(flags.childWaitTimeout, '--child-wait-timeout'),
    childPollIntervalMs: optionalDuration(flags.childPollInterval, '--child-poll-interval'),
    dependencyPollIntervalMs: optionalDuration(flags.dependencyPollInterval, '--dependency-poll-interval'),
    idleTimeoutMs: optionalDuration(flags.timeout, '--timeout'),
    inputWaitMs: optionalDuration(flags.inputWait, '--input-wait'),
    stallAfterMs: optionalDuration(flags.stallAfter, '--stall-after'),
    killOnStall: flags.killOnStall,
    budget: budgetFlags(flags),
  };
}

/** Flags common to `task`, `task resume` and `resume` (nest-commander reads the decorators of a base class). */
export abstract class LoopFlagParsers extends CommandRunner {
  @Option({ flags: '--project <id>', description: 'project id (default: $JRUN_PROJECT_ID or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task id task-YYYYMMDD-HHMMSS-slug (task: generated and printed on stderr when omitted; resume: from $JRUN_TASK_ID or the working directory)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <name>', description: 'config agent name or agent type: claude, codex, gemini, perplexity, xai (default: diversification policy, defaults.agent, first configured agent)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of the agent (default: the task folder)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--max-restarts <n>', description: 'restarts allowed after the first attempt: N restarts = N+1 attempts, 0 = run once (default: 100; resume: 3)' })
  parseMaxRestarts(v: string): string {
    return v;
  }

  @Option({ flags: '--restart-delay <duration>', description: 'pause between attempts (Go duration; default 1s)' })
  parseRestartDelay(v: string): string {
    return v;
  }

  @Option({ flags: '--child-wait-timeout <duration>', description: 'after DONE, how long to wait for live child runs before completing with a warning (default 5m0s)' })
  parseChildWaitTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--input-wait <duration>', description: 'how long the loop waits for an answer to an open QUESTION/BLOCKED before the task fails (default 24h0m0s)' })
  parseInputWait(v: string): string {
    return v;
  }

  @Option({ flags: '--stall-after <duration>', description: 'flag a run stalled (bus WARNING, UI) after this long without output or bus activity (default: off)' })
  parseStallAfter(v: string): string {
    return v;
  }

  @Option({ flags: '--kill-on-stall', description: 'with --stall-after: also terminate a stalled run (the loop restarts it like a failed attempt)' })
  parseKillOnStall(): boolean {
    return true;
  }

  @Option({ flags: '--max-tokens <n>', description: 'budget of the task tree (its runs and all descendant runs): input + output tokens; crossing it stops the tree, posts BUDGET_EXCEEDED and never restarts (stored in TASK-SETTINGS.yaml; default: defaults.max_tokens)' })
  parseMaxTokens(v: string): string {
    return v;
  }

  @Option({ flags: '--max-cost-usd <usd>', description: 'budget of the task tree in US dollars, as reported by the agents (default: defaults.max_cost_usd)' })
  parseMaxCostUsd(v: string): string {
    return v;
  }

  @Option({ flags: '--max-wall-time <duration>', description: 'budget of the task tree in wall time since its first run started (default: defaults.max_wall_time)' })
  parseMaxWallTime(v: string): string {
    return v;
  }

  @Option({ flags: '--resume-mode <mode>', description: 'continue: each attempt resumes the previous attempt\'s agent session (claude/gemini --resume, codex exec resume); fresh (default) starts cold' })
  parseResumeMode(v: string): string {
    return v;
  }

  @Option({ flags: '--child-poll-interval <duration>', description: 'how often to check child runs after DONE (default 1s)' })
  parseChildPollInterval(v: string): string {
    return v;
  }
}

/** `--project`, `--task` and `--root` of the commands that act on one existing task (D7, D8). */
export abstract class TaskScopeParsers extends CommandRunner {
  @Option({ flags: '--project <id>', description: 'project id (default: $JRUN_PROJECT_ID or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task id (default: $JRUN_TASK_ID or the working directory)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }
}
