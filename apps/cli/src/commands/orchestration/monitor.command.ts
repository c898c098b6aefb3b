import { Inject } from '@nestjs/common';
import { resolve } from 'node:path';
import { Command, CommandRunner, Option } from 'nest-commander';
import { RunnerService } from '@app/runner';
import { DEFAULT_MONITOR_INTERVAL_MS, DEFAULT_MONITOR_RATE_LIMIT_MS, DEFAULT_MONITOR_STALE_MS, runMonitor } from '@app/orchestration';
import { CHANGE_FEED, ChangeFeed, LIVENESS_PROBE, type LivenessProbe, pathExists, STORAGE_INDEX_FACTORY, type StorageIndexFactory, validateProjectId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { agentCallerEnv, checkDir, loadRunConfig, LoadedConfig, runRoot } from '../engine/job-common';
import { durationFlag } from '../engine/support/options';
import { required } from './flags';

interface MonitorFlags {
  root?: string;
  project?: string;
  todo?: string;
  agent?: string;
  config?: string;
  cwd?: string;
  interval?: string;
  staleAfter?: string;
  rateLimit?: string;
  stopGrace?: string;
  dryRun?: boolean;
  once?: boolean;
}

@Command({
  name: 'monitor',
  description:
    'Drive the unchecked "- [ ] ... task-<id> ..." items of a TODO file: start tasks without runs (TASK.md = the item text), ' +
    'resume failed or dead ones, recover runs alive but silent for --stale-after (stop, then relaunch), and finalize ' +
    'completed runs with output (create DONE, tick the item). Skips DONE and CANCELLED tasks and honours STOP-REQUESTED. ' +
    'Runs a pass every --interval and on file changes until stopped; --once does one pass and waits for its jobs.',
})
export class MonitorCommand extends CommandRunner {
  constructor(
    private readonly runner: RunnerService,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
  ) {
    super();
  }

  async run(_args: string[], flags: MonitorFlags = {}): Promise<void> {
    await this.monitor(flags);
  }

  private async monitor(flags: MonitorFlags): Promise<void> {
    const projectId = validateProjectId(required(flags.project, '--project'));
    const todoPath = resolve(flags.todo ?? 'TODOs.md');
    if (!pathExists(todoPath)) throw new UsageError(`TODO file not found: ${todoPath}`);
    const intervalMs = flags.interval !== undefined ? durationFlag(flags.interval, '--interval') : DEFAULT_MONITOR_INTERVAL_MS;
    const staleAfterMs = (flags.staleAfter !== undefined ? durationFlag(flags.staleAfter, '--stale-after') : 0) || DEFAULT_MONITOR_STALE_MS;
    const rateLimitMs = (flags.rateLimit !== undefined ? durationFlag(flags.rateLimit, '--rate-limit') : 0) || DEFAULT_MONITOR_RATE_LIMIT_MS;
    const stopGraceMs = flags.stopGrace !== undefined ? durationFlag(flags.stopGrace, '--stop-grace') : undefined;
    const cwd = checkDir(flags.cwd, 'working directory');
    // Issue #12: the config is loaded as every run command loads it (--config, $CONDUCTOR_CONFIG,
    // ./config.yaml, …), also with --agent, which may name one of its agents.
    const loaded: LoadedConfig = loadRunConfig(flags.config);
    const root = runRoot(flags.root, loaded);
    await runMonitor({
      layout: this.indexFor(root).layout,
      probe: this.probe,
      projectId,
      todoPath,
      agent: flags.agent,
      config: loaded.config?.agents && Object.keys(loaded.config.agents).length ? loaded.config : undefined,
      cwd,
      env: agentCallerEnv(loaded),
      staleAfterMs,
      rateLimitMs,
      dryRun: flags.dryRun,
      runJob: (opts) => this.runner.runJob(opts),
      stopRun: (dir, opts) => this.runner.stopRun(dir, opts),
      stopGraceMs,
      out: (line: string): void => void process.stdout.write(`${line}\n`),
      intervalMs,
      once: flags.once === true || intervalMs === 0,
      feed: this.feed,
    });
  }

  @Option({ flags: '--project <id>', description: 'project id (required)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--todo <file>', description: 'TODO file with "- [ ] <text with task id>" items (default TODOs.md)' })
  parseTodo(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <name>', description: 'config agent name or agent type for launched jobs (without it a config with agents is needed)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--cwd <dir>', description: 'working directory of launched agents (default: the task folder)' })
  parseCwd(v: string): string {
    return v;
  }

  @Option({ flags: '--interval <duration>', description: 'time between passes in daemon mode; 0 = one pass (default 30s)' })
  parseInterval(v: string): string {
    return v;
  }

  @Option({ flags: '--stale-after <duration>', description: 'a live run without FACT/DECISION/ERROR/REVIEW messages for this long is recovered; 0 = 20m (default 20m)' })
  parseStaleAfter(v: string): string {
    return v;
  }

  @Option({ flags: '--rate-limit <duration>', description: 'pause between successive actions, also in dry-run; 0 = 2s (default 2s)' })
  parseRateLimit(v: string): string {
    return v;
  }

  @Option({ flags: '--stop-grace <duration>', description: 'recover: wait this long after SIGTERM before SIGKILL (default 30s)' })
  parseStopGrace(v: string): string {
    return v;
  }

  @Option({ flags: '--dry-run', description: 'print the decisions only; change nothing' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--once', description: 'one pass, wait for the jobs it launched, then exit (no lock file)' })
  parseOnce(): boolean {
    return true;
  }
}
