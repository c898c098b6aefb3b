import { Inject } from '@nestjs/common';
import { join } from 'node:path';
import { Command, Option } from 'nest-commander';
import { ScopeOptionParsers } from './support/scope-options';
import { CHANGE_FEED, ChangeFeed, checkRunDir, existingTaskDir, followRunOutput, LIVENESS_PROBE, LivenessProbe, readRunOutput, RunOutputFile, RunsLayout, unknownName } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { OutputSynthesizeCommand } from './output-synthesize.command';
import { countFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';
import { listRunNames } from './support/task-state';

interface OutputOptions {
  config?: string;
  runDir?: string;
  root?: string;
  project?: string;
  task?: string;
  run?: string;
  tail?: string;
  file?: string;
  follow?: boolean;
}

type OutputFile = RunOutputFile;

export function parseOutputFile(value: string | undefined): OutputFile {
  const v = (value ?? 'output').toLowerCase();
  if (v === '' || v === 'output') return 'output';
  if (v === 'stdout' || v === 'stderr' || v === 'prompt') return v;
  throw new UsageError(`unknown --file value ${JSON.stringify(value)}: must be output, stdout, stderr, or prompt`);
}

export function resolveRunDir(options: OutputOptions): string {
  if (options.runDir?.trim()) return checkRunDir(options.runDir.trim());
  const root = resolveRoot(options.root, process.env, options.config);
  const scope = inferScope({ project: options.project, task: options.task }, { root });
  if (!scope.project) throw new UsageError('--project is required when --run-dir is not specified');
  if (!scope.task) throw new UsageError('--task is required when --run-dir is not specified');
  const layout = new RunsLayout(root);
  const runsDir = layout.runsDir(scope.project, scope.task);
  const wanted = options.run?.trim() ? layout.runDir(scope.project, scope.task, options.run.trim()) : undefined;
  existingTaskDir(layout, scope.project, scope.task);
  const runs = listRunNames(runsDir) ?? [];
  if (wanted) {
    if (!runs.includes(options.run!.trim())) throw unknownName('run', options.run!.trim(), runs, ` of task ${JSON.stringify(scope.task)}`);
    return wanted;
  }
  if (runs.length === 0) throw new Error(`no runs found for project ${scope.project} task ${scope.task}`);
  return join(runsDir, runs[runs.length - 1]);
}

/** `--follow`: the lib's follow through the shared tailer; Ctrl-C ends it with a newline. */
async function followOutput(runDir: string, file: OutputFile, probe: LivenessProbe, feed: ChangeFeed): Promise<void> {
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  // The signal listeners stay: Nest's shutdown hook re-raises the signal after closing the app,
  // and a remaining listener keeps that from turning a clean stop into a signal death.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const write = (text: string): void => void process.stdout.write(text);
  const end = await followRunOutput(runDir, file, { feed, probe, write, signal: interrupt.signal });
  if (end === 'interrupted') process.stdout.write('\n');
}

@Command({
  name: 'output',
  description: 'Print a file of a run (default: output.md of the newest run), or follow it while the run is live',
  subCommands: [OutputSynthesizeCommand],
})
export class OutputCommand extends ScopeOptionParsers {
  constructor(
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
  ) {
    super();
  }

  async run(params: string[], options: OutputOptions = {}): Promise<void> {
    if (params.length) throw new UsageError(`unknown argument ${JSON.stringify(params[0])} (did you mean "output synthesize"?)`);
    const file = parseOutputFile(options.file);
    const tail = options.tail !== undefined ? countFlag(options.tail, '--tail') : 0;
    const runDir = resolveRunDir(options);
    if (options.follow) {
      await followOutput(runDir, file, this.probe, this.feed);
      return;
    }
    process.stdout.write(readRunOutput(runDir, file, tail));
  }

  @Option({ flags: '--run-dir <dir>', description: 'run folder to read (overrides --root/--project/--task/--run)' })
  parseRunDir(v: string): string {
    return v;
  }

  @Option({ flags: '--run <id>', description: 'run id (default: the newest run folder)' })
  parseRun(v: string): string {
    return v;
  }

  @Option({ flags: '--tail <n>', description: 'print only the last N lines (0 = all; ignored with --follow)' })
  parseTail(v: string): string {
    return v;
  }

  @Option({ flags: '--file <name>', description: 'which file: output (output.md, else agent-stdout.txt), stdout, stderr, prompt' })
  parseFile(v: string): string {
    return v;
  }

  @Option({ flags: '-f, --follow', description: 'stream the live file until the run ends, 60 s pass without new output, or Ctrl-C' })
  parseFollow(): boolean {
    return true;
  }
}
