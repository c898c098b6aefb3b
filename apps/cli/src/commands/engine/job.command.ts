import { Command, Option } from 'nest-commander';
import { Inject } from '@nestjs/common';
import { CHANGE_FEED, ChangeFeed, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { MessageBusService } from '@app/messagebus';
import { RunnerService } from '@app/runner';
import { collect } from './support/options';
import { JobBatchCommand } from './job-batch.command';
import { JOB_FLAGS, type JobFlags } from './job-flags';
import { runJobCommand } from './job-run';
import { WorktreeFlagParsers } from './task-options';

// `job` normally runs on the Nest-free hot path (apps/cli/src/fast); this class serves `--help`,
// usage errors, `job batch` and the Nest composition root (test/e2e/di).
@Command({
  name: 'job',
  subCommands: [JobBatchCommand],
  description:
    'Run one agent once (no restart loop) in a task: creates a run folder with prompt.md, run-info.yaml, ' +
    'agent-stdout.txt/agent-stderr.txt and output.md, and posts RUN_START/RUN_STOP to the task bus. ' +
    'Inside an agent, project/task/parent run come from the JRUN_* variables. ' +
    'With RUN_AGENT_SUPERVISOR=1 the run goes on in one of the host\'s shared task supervisors (one process per core, ' +
    'RUN_AGENT_SUPERVISOR_SHARDS, for a whole tree of sub-agents; docs/operations.md) and this command stays in the ' +
    'foreground as its client (not with --follow).',
})
export class JobCommand extends WorktreeFlagParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(_args: string[], flags: JobFlags = {}): Promise<void> {
    await runJobCommand(flags, { runner: this.runner, feed: this.feed, indexFor: this.indexFor, writers: this.bus.writers });
  }

  @Option(JOB_FLAGS.doneWhen) parseDoneWhen(v: string, prev?: string[]): string[] { return collect(v, prev); }
  @Option(JOB_FLAGS.doneTimeout) parseDoneTimeout(v: string): string { return v; }
  @Option(JOB_FLAGS.maxTokens) parseMaxTokens(v: string): string { return v; }
  @Option(JOB_FLAGS.maxCostUsd) parseMaxCostUsd(v: string): string { return v; }
  @Option(JOB_FLAGS.maxWallTime) parseMaxWallTime(v: string): string { return v; }
  @Option(JOB_FLAGS.agent) parseAgent(v: string): string { return v; }
  @Option(JOB_FLAGS.prompt) parsePrompt(v: string, prev?: string[]): string[] { return collect(v, prev); }
  @Option(JOB_FLAGS.promptFile) parsePromptFile(v: string, prev?: string[]): string[] { return collect(v, prev); }
  @Option(JOB_FLAGS.cwd) parseCwd(v: string): string { return v; }
  @Option(JOB_FLAGS.conductorUrl) parseConductorUrl(v: string): string { return v; }
  @Option(JOB_FLAGS.parentRunId) parseParentRunId(v: string): string { return v; }
  @Option(JOB_FLAGS.noWait) parseNoWait(): boolean { return false; }
  @Option(JOB_FLAGS.previousRunId) parsePreviousRunId(v: string): string { return v; }
  @Option(JOB_FLAGS.runId) parseRunId(v: string): string { return v; }
  @Option(JOB_FLAGS.timeout) parseTimeout(v: string): string { return v; }
  @Option(JOB_FLAGS.follow) parseFollow(): boolean { return true; }
}
