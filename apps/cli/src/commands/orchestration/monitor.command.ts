import { Inject } from '@nestjs/common';
import { join, resolve } from 'node:path';
import { Command, CommandRunner, Option } from 'nest-commander';
import {
  DEFAULT_MONITOR_INTERVAL_MS,
  DEFAULT_MONITOR_RATE_LIMIT_MS,
  DEFAULT_MONITOR_STALE_MS,
  MONITOR_LOCK_FILE,
  MonitorLock,
  monitorPass,
  RunnerService,
} from '@app/runner';
import { CHANGE_FEED, ChangeFeed, ensureDir, pathExists, RunsLayout, validateProjectId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { agentCallerEnv, asCliError, checkDir, loadRunConfig, LoadedConfig, runRoot } from '../engine/job-common';
import { durationFlag } from '../engine/support/options';
import { required } from './flags';

const CHANGE_SETTLE_MS = 250;

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
  ) {
    super();
  }

  async run(_args: string[], flags: MonitorFlags = {}): Promise<void> {
    try {
      await this.monitor(flags);
    } catch (err) {
      throw asCliError(err);
    }
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
    const once = flags.once === true || intervalMs === 0;
    const out = (line: string): void => void process.stdout.write(`${line}\n`);
    const inFlight = new Set<string>();
    const abort = new AbortController();
    const pass = () =>
      monitorPass({
        root,
        projectId,
        todoPath,
        agent: flags.agent,
        config: loaded.config?.agents && Object.keys(loaded.config.agents).length ? loaded.config : undefined,
        cwd,
        env: agentCallerEnv(loaded),
        staleAfterMs,
        rateLimitMs,
        dryRun: flags.dryRun,
        inFlight,
        runJob: (opts) => this.runner.runJob(opts),
        stopRun: (dir, opts) => this.runner.stopRun(dir, opts),
        stopGraceMs,
        out,
        signal: abort.signal,
      });

    if (once) {
      const result = await pass();
      const outcomes = await Promise.all(result.launched);
      if (result.failed > 0 || outcomes.includes(false)) throw new Error(`monitor: ${result.failed + outcomes.filter((ok) => !ok).length} task(s) failed to start or run`);
      return;
    }

    const lock = new MonitorLock(join(new RunsLayout(root).projectDir(projectId), MONITOR_LOCK_FILE));
    ensureDir(new RunsLayout(root).projectDir(projectId));
    lock.acquire(projectId);
    const releaseOnExit = (): void => lock.release();
    process.once('exit', releaseOnExit);
    const stop = (): void => abort.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const feed = this.feed;
    let wake: (() => void) | undefined;
    let missed = false; // a change seen while a pass was running
    const poke = (): void => (wake ? wake() : void (missed = true));
    const unwatch = [feed.watch(todoPath, poke), feed.watch(new RunsLayout(root).projectDir(projectId), poke)];
    const launched: Array<Promise<boolean>> = [];
    let failed = 0;
    try {
      while (!abort.signal.aborted) {
        const result = await pass();
        launched.push(...result.launched);
        failed += result.failed;
        await this.waitForNextPass(intervalMs, abort.signal, (handler) => {
          wake = handler;
          if (handler && missed) {
            missed = false;
            handler();
          }
        });
      }
      const outcomes = await Promise.all(launched);
      failed += outcomes.filter((ok) => !ok).length;
    } finally {
      unwatch.forEach((u) => u());
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      lock.release();
      process.removeListener('exit', releaseOnExit);
    }
    if (failed > 0) throw new Error(`monitor: ${failed} task(s) failed to start or run`);
  }

  /** Resolves after `intervalMs`, on abort, or shortly after a change notification. */
  private waitForNextPass(intervalMs: number, signal: AbortSignal, onWake: (handler: (() => void) | undefined) => void): Promise<void> {
    return new Promise<void>((done) => {
      let settled = false;
      const finish = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        onWake(undefined);
        signal.removeEventListener('abort', finish);
        done();
      };
      const timer = setTimeout(finish, intervalMs);
      // Change notifications come in bursts (our own writes cause some too): settle briefly.
      onWake(() => void setTimeout(finish, CHANGE_SETTLE_MS));
      signal.addEventListener('abort', finish, { once: true });
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
