import { Inject } from '@nestjs/common';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'nest-commander';
import { ScopeOptionParsers } from './support/scope-options';
import { CHANGE_FEED, ChangeFeed, LIVENESS_PROBE, LivenessProbe, readRunInfo, readRunInfoReconciled, runInfoFile, RunsLayout, runOutputFile } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { OutputSynthesizeCommand } from './output-synthesize.command';
import { countFlag } from './support/options';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';
import { listRunNames } from './support/task-state';
import { waitForChange } from './support/wake';

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

type OutputFile = 'output' | 'stdout' | 'stderr' | 'prompt';

/** Tunables of `--follow` (cli-storage.md §7.4). */
export const FOLLOW = {
  fileWaitMs: 5000,
  idleMs: 60_000,
  /** Liveness re-check when no file event arrives: a dead writer produces no events. */
  recheckMs: 1000,
  chunkBytes: 64 * 1024,
};

export function parseOutputFile(value: string | undefined): OutputFile {
  const v = (value ?? 'output').toLowerCase();
  if (v === '' || v === 'output') return 'output';
  if (v === 'stdout' || v === 'stderr' || v === 'prompt') return v;
  throw new UsageError(`unknown --file value ${JSON.stringify(value)}: must be output, stdout, stderr, or prompt`);
}

/** The file a finished run prints for `--file`. */
export function resolveOutputFile(runDir: string, file: OutputFile): string {
  const single: Record<Exclude<OutputFile, 'output'>, string> = { stdout: 'agent-stdout.txt', stderr: 'agent-stderr.txt', prompt: 'prompt.md' };
  if (file === 'output') {
    const outputMd = runOutputFile(runDir);
    if (existsSync(outputMd)) return outputMd;
    const fallback = join(runDir, 'agent-stdout.txt');
    if (existsSync(fallback)) return fallback;
    throw new Error(`file not found: ${outputMd} (also tried agent-stdout.txt)`);
  }
  const path = join(runDir, single[file]);
  if (!existsSync(path)) throw new Error(`file not found: ${path}`);
  return path;
}

/** The file that grows while a run is live: output and stdout both follow agent-stdout.txt. */
export function liveFile(runDir: string, file: OutputFile): string {
  if (file === 'stderr') return join(runDir, 'agent-stderr.txt');
  if (file === 'prompt') return join(runDir, 'prompt.md');
  return join(runDir, 'agent-stdout.txt');
}

/** Lines of `text`, each printed with `\n`; `tail` > 0 keeps the last lines only. */
export function renderLines(text: string, tail: number): string {
  if (text === '') return '';
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const kept = tail > 0 ? lines.slice(-tail) : lines;
  return kept.map((line) => `${line.endsWith('\r') ? line.slice(0, -1) : line}\n`).join('');
}

export function resolveRunDir(options: OutputOptions): string {
  if (options.runDir?.trim()) {
    const dir = options.runDir.trim();
    if (!existsSync(dir)) throw new Error(`run directory ${dir}: no such file or directory`);
    return dir;
  }
  const root = resolveRoot(options.root, process.env, options.config);
  const scope = inferScope({ project: options.project, task: options.task }, { root });
  if (!scope.project) throw new UsageError('--project is required when --run-dir is not specified');
  if (!scope.task) throw new UsageError('--task is required when --run-dir is not specified');
  const layout = new RunsLayout(root);
  const runsDir = layout.runsDir(scope.project, scope.task);
  const wanted = options.run?.trim() ? layout.runDir(scope.project, scope.task, options.run.trim()) : undefined;
  const runs = listRunNames(runsDir);
  if (!runs) throw new Error(`no runs found for project ${scope.project} task ${scope.task}`);
  if (wanted) {
    if (!runs.includes(options.run!.trim())) throw new Error(`run ${options.run!.trim()} not found for project ${scope.project} task ${scope.task}`);
    return wanted;
  }
  if (runs.length === 0) throw new Error(`no runs found for project ${scope.project} task ${scope.task}`);
  return join(runsDir, runs[runs.length - 1]);
}

function readStatus(infoPath: string, probe: LivenessProbe, reconcile: boolean): string | undefined {
  try {
    return (reconcile ? readRunInfoReconciled(infoPath, probe) : readRunInfo(infoPath)).status;
  } catch {
    return undefined;
  }
}

/** Copies bytes of `path` from `offset` to stdout; returns how many. */
function drain(path: string, offset: number): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return 0;
  }
  const buffer = Buffer.alloc(FOLLOW.chunkBytes);
  let total = 0;
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, offset + total);
      if (n <= 0) break;
      writeSync(1, buffer, 0, n);
      total += n;
    }
  } finally {
    closeSync(fd);
  }
  return total;
}

/**
 * Tails the live file of a running run. Ends after a final drain as soon as the run is no longer
 * running — including a "running" run whose process died (reconciled) — after `FOLLOW.idleMs`
 * without new bytes, or on SIGINT/SIGTERM. File-change events wake it; `recheckMs` is the fallback.
 */
export async function followOutput(runDir: string, file: OutputFile, probe: LivenessProbe, feed: ChangeFeed): Promise<void> {
  const infoPath = runInfoFile(runDir);
  const initial = readStatus(infoPath, probe, false);
  if (initial !== undefined && initial !== 'running') {
    process.stdout.write(renderLines(readFileSync(resolveOutputFile(runDir, file), 'utf8'), 0));
    return;
  }
  const path = liveFile(runDir, file);
  const waitUntil = Date.now() + FOLLOW.fileWaitMs;
  while (!existsSync(path)) {
    const left = waitUntil - Date.now();
    if (left <= 0) throw new Error(`output file not found: ${path}`);
    await waitForChange(feed, [path], Math.min(left, 500));
  }

  let interrupted = false;
  let wake: (() => void) | undefined;
  const onSignal = (): void => {
    interrupted = true;
    wake?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stops = [feed.watch(path, () => wake?.()), feed.watch(infoPath, () => wake?.())];
  try {
    let offset = 0;
    let lastData = Date.now();
    for (;;) {
      if (interrupted) {
        process.stdout.write('\n');
        return;
      }
      const n = drain(path, offset);
      if (n > 0) {
        offset += n;
        lastData = Date.now();
      }
      const status = readStatus(infoPath, probe, true);
      if (status !== undefined && status !== 'running') {
        drain(path, offset);
        return;
      }
      const idleLeft = FOLLOW.idleMs - (Date.now() - lastData);
      if (idleLeft <= 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(FOLLOW.recheckMs, idleLeft));
        function done(): void {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  } finally {
    stops.forEach((stop) => stop());
    // The signal listeners stay: Nest's shutdown hook re-raises the signal after closing the app,
    // and a remaining listener keeps that from turning a clean stop into a signal death.
  }
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
    const path = resolveOutputFile(runDir, file);
    if (statSync(path).isDirectory()) throw new Error(`${path} is a directory`);
    process.stdout.write(renderLines(readFileSync(path, 'utf8'), tail));
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
