/**
 * `run-agent output` (plain: no NestJS), run by OutputCommand and by the Nest-free hot path
 * (apps/cli/src/fast) with the seams of their composition root.
 */
import { join } from 'node:path';
import { type ChangeFeed, checkRunDir, existingTaskDir, followRunOutput, type LivenessProbe, readRunOutput, RunOutputFile, type StorageIndexFactory, unknownName } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import type { TextOut } from '@app/boot';
import type { OutputOptions } from './output-flags';
import { countFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';
import { listRunNames } from './support/task-state';

type OutputFile = RunOutputFile;

export function parseOutputFile(value: string | undefined): OutputFile {
  const v = (value ?? 'output').toLowerCase();
  if (v === '' || v === 'output') return 'output';
  if (v === 'stdout' || v === 'stderr' || v === 'prompt') return v;
  throw new UsageError(`unknown --file value ${JSON.stringify(value)}: must be output, stdout, stderr, or prompt`);
}

export function resolveRunDir(options: OutputOptions, indexFor: StorageIndexFactory): string {
  if (options.runDir?.trim()) return checkRunDir(options.runDir.trim());
  const root = resolveRoot(options.root, process.env, options.config);
  const scope = inferScope({ project: options.project, task: options.task }, { root });
  if (!scope.project) throw new UsageError('--project is required when --run-dir is not specified');
  if (!scope.task) throw new UsageError('--task is required when --run-dir is not specified');
  const layout = indexFor(root).layout;
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
async function followOutput(runDir: string, file: OutputFile, seams: OutputSeams): Promise<void> {
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  // The signal listeners stay: Nest's shutdown hook re-raises the signal after closing the app,
  // and a remaining listener keeps that from turning a clean stop into a signal death.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const write = (text: string): void => void seams.stdout.write(text);
  const end = await followRunOutput(runDir, file, { feed: seams.feed, probe: seams.probe, write, signal: interrupt.signal });
  if (end === 'interrupted') seams.stdout.write('\n');
}

/** What `output` takes from its composition root. */
export interface OutputSeams {
  probe: LivenessProbe;
  feed: ChangeFeed;
  indexFor: StorageIndexFactory;
  /** Where the command prints: process.stdout, or fdStdout() on the hot path. */
  stdout: TextOut;
}

export async function runOutput(options: OutputOptions, seams: OutputSeams): Promise<void> {
  const file = parseOutputFile(options.file);
  const tail = options.tail !== undefined ? countFlag(options.tail, '--tail') : 0;
  const runDir = resolveRunDir(options, seams.indexFor);
  if (options.follow) {
    await followOutput(runDir, file, seams);
    return;
  }
  seams.stdout.write(readRunOutput(runDir, file, tail));
}
