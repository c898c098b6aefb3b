import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { readMessages } from '@app/messagebus';
import { evaluateQuorum, formatQuorumReport } from '@app/orchestration';
import { pathExists, STORAGE_INDEX_FACTORY, type StorageIndexFactory, validateProjectId, validateRunId, validateTaskId } from '@app/storage';
import { EXIT_FAILURE, UsageError } from '../../common/cli-errors';
import { withParentOptions } from '../engine/job-common';
import { resolveRoot } from '../engine/support/runs-root';
import { intFlag, required } from './flags';

interface QuorumFlags {
  root?: string;
  project?: string;
  task?: string;
  runs?: string;
  required?: string;
  json?: boolean;
}

@SubCommand({
  name: 'quorum',
  description:
    'Check whether enough independent reviewers approved: reads DECISION and REVIEW messages of the listed runs from the ' +
    'task bus (--task) or the project bus. A body with APPROVED, LGTM or +1 approves; REJECTED, BLOCKED or ' +
    'CHANGES_REQUESTED rejects. Each run counts once (its latest verdict); messages without a run id never count. ' +
    'Exit 0 when approvals >= --required and nothing rejects, else exit 1.',
})
export class ReviewQuorumCommand extends CommandRunner {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  async run(_args: string[], options: QuorumFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    const projectId = validateProjectId(required(flags.project, '--project'));
    const taskId = flags.task?.trim() ? validateTaskId(flags.task.trim()) : undefined;
    const runs = [...new Set(required(flags.runs, '--runs').split(',').map((r) => r.trim()).filter(Boolean))];
    if (runs.length === 0) throw new UsageError('--runs is empty');
    runs.forEach((r) => validateRunId(r));
    const need = flags.required !== undefined ? intFlag(flags.required, '--required', Number.MIN_SAFE_INTEGER) : 2;
    const layout = this.indexFor(resolveRoot(flags.root)).layout;
    const busPath = taskId ? layout.taskBus(projectId, taskId) : layout.projectBus(projectId);
    if (!pathExists(busPath)) throw new Error(`message bus not found: ${busPath}`);
    const result = evaluateQuorum(readMessages(busPath), runs, need);
    if (flags.json) {
      process.stdout.write(
        `${JSON.stringify({ bus: busPath, runs, required: result.required, approvals: result.approvals, rejections: result.rejections, votes: result.votes.map((v) => ({ run_id: v.runId, msg_id: v.msgId, verdict: v.verdict })), ignored_without_run_id: result.ignoredWithoutRunId, met: result.met, reason: result.reason ?? null }, null, 2)}\n`,
      );
    } else {
      process.stdout.write(formatQuorumReport(result));
    }
    if (!result.met) process.exitCode = EXIT_FAILURE;
  }

  @Option({ flags: '--project <id>', description: 'project id (required)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'read the task bus of this task (default: the project bus)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--runs <ids>', description: 'comma-separated run ids of the reviewers (required)' })
  parseRuns(v: string): string {
    return v;
  }

  @Option({ flags: '--required <n>', description: 'approvals needed for quorum; 0 or less means 2 (default 2)' })
  parseRequired(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print the result as JSON (exit code as without --json)' })
  parseJson(): boolean {
    return true;
  }
}

@Command({ name: 'review', description: 'Review quality gates for multi-agent workflows (quorum)', subCommands: [ReviewQuorumCommand] })
export class ReviewCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
