import { fstatSync, readSync } from 'node:fs';
import { validateProjectId, validateRunId, validateTaskId } from '@app/storage/ids';
import { createBusWriters } from '@app/messagebus/bus-writers';
import { createProjectBusFolder } from '@app/messagebus/bus-path';
import { BusError } from '@app/messagebus/errors';
import { validateHeaderFields } from '@app/messagebus/header-fields';
import { StorageError } from '@app/storage/storage.errors';
import { resolveBodyLimit } from './body-limit';
import { UsageError } from '../../common/cli-errors';
import { withConfigFlag, type BusPostOptions } from './bus-flags';
import { busFileFor, busFromWorkingDir, resolveBusRoot, scopeFromBusPath, scopeFromCwdRunInfo, scopeFromRunFolder, scopeFromTaskFolder, type BusEnv, type Scope } from './bus-scope';

export interface PostIo extends BusEnv {
  stdout: { write(s: string): unknown };
  /** Body read from stdin when --body is empty (undefined when stdin is a terminal). */
  readStdin: () => string | undefined;
}

/** Reads fd 0 to EOF; a non-blocking stdin (EAGAIN) is waited for in short sleeps. */
function readAllStdin(): string {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(64 * 1024);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 5);
        continue;
      }
      if (code === 'EOF') break;
      throw err;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** stdin's content when it is not a terminal/character device (upstream's rule), else undefined. */
export function readStdinIfPiped(): string | undefined {
  try {
    if (fstatSync(0).isCharacterDevice()) return undefined;
    return readAllStdin();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EBADF' || code === 'EINVAL' || code === 'ENXIO') return undefined;
    throw new Error(`read stdin: ${(err as Error).message}`);
  }
}

function firstOf(...values: (string | undefined)[]): string | undefined {
  for (const v of values) {
    const t = v?.trim();
    if (t) return t;
  }
  return undefined;
}

/** Invalid ids or header fields are usage errors (exit 2, one line), whichever validator found them. */
export function asUsageError<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if ((err instanceof StorageError && err.code === 'INVALID_ID') || (err instanceof BusError && err.code === 'INVALID_MESSAGE')) throw new UsageError(err.message);
    throw err;
  }
}

/** Flag values checked before anything touches the disk (D18). */
function validateFlags(opts: BusPostOptions): void {
  if (opts.type !== undefined && opts.type.trim() === '') throw new UsageError('--type must not be empty');
  for (const p of opts.parent ?? []) if (p.trim() === '') throw new UsageError('--parent must not be empty');
  for (const l of opts.link ?? []) if (l.trim() === '') throw new UsageError('--link must not be empty');
  asUsageError(() => {
    if (opts.project !== undefined) validateProjectId(opts.project);
    if (opts.task !== undefined) validateTaskId(opts.task);
    if (opts.run !== undefined) validateRunId(opts.run);
  });
}

/**
 * Bus file for `bus post`: $JRUN_MESSAGE_BUS → --project[/--task] → run-info → project home →
 * discovery. D7: an explicit --project or --task names the bus (upstream lets $JRUN_MESSAGE_BUS
 * win, so an agent posting to another task or to the project bus wrote into its own task bus).
 */
export function resolvePostBus(opts: BusPostOptions, e: BusEnv): string {
  const fromEnv = firstOf(e.env.JRUN_MESSAGE_BUS);
  if (fromEnv && !firstOf(opts.project, opts.task)) return fromEnv;
  let project = firstOf(opts.project);
  if (!project && firstOf(opts.task)) {
    project = firstOf(scopeFromRunFolder(e.env.JRUN_RUN_FOLDER).project, scopeFromTaskFolder(e.env.JRUN_TASK_FOLDER).project, e.env.JRUN_PROJECT_ID);
    if (!project) throw new UsageError('--task needs --project (or $JRUN_PROJECT_ID)');
    validateProjectId(project);
  }
  if (project) return busFileFor(resolveBusRoot(opts.root, e), project, firstOf(opts.task));
  return busFromWorkingDir(opts.root, e);
}

/** Message ids: flag → bus path → $JRUN_RUN_FOLDER → $JRUN_TASK_FOLDER → CWD run-info → $JRUN_*_ID. */
export function resolvePostScope(opts: BusPostOptions, busPath: string, e: BusEnv): Scope {
  const sources: Array<() => Scope> = [
    () => scopeFromBusPath(busPath),
    () => scopeFromRunFolder(e.env.JRUN_RUN_FOLDER),
    () => scopeFromTaskFolder(e.env.JRUN_TASK_FOLDER),
    () => scopeFromCwdRunInfo(e.cwd),
    () => ({ project: e.env.JRUN_PROJECT_ID, task: e.env.JRUN_TASK_ID }),
  ];
  const pick = (key: 'project' | 'task', flag: string | undefined): string | undefined => {
    let value = firstOf(flag);
    for (let i = 0; !value && i < sources.length; i++) value = firstOf(sources[i]()[key]);
    return value;
  };
  const project = pick('project', opts.project);
  const task = pick('task', opts.task);
  const run = firstOf(opts.run, scopeFromRunFolder(e.env.JRUN_RUN_FOLDER).run) ?? firstOf(scopeFromCwdRunInfo(e.cwd).run, e.env.JRUN_ID);
  return { project, task, run };
}

/** `run-agent bus post`: appends one message and prints `msg_id: <id>`. */
export async function runBusPost(opts: BusPostOptions, rawIo: PostIo): Promise<void> {
  const io = withConfigFlag(rawIo, opts.config);
  validateFlags(opts);
  const maxBodyBytes = resolveBodyLimit(opts.maxBodyBytes, io);
  const busPath = asUsageError(() => resolvePostBus(opts, io));
  const scope = resolvePostScope(opts, busPath, io);
  if (!scope.project) throw new Error('cannot infer project: run from inside a task or project directory');
  const header = {
    type: opts.type ?? 'INFO',
    project_id: scope.project,
    task_id: scope.task ?? '',
    run_id: scope.run ?? '',
    parents: (opts.parent ?? []).map((id) => ({ msg_id: id.trim() })),
    links: (opts.link ?? []).map((url) => ({ url: url.trim() })),
  };
  asUsageError(() => validateHeaderFields(header));
  let body = opts.body ?? '';
  if (body === '') body = io.readStdin() ?? '';
  if (body.trim() === '' && !opts.allowEmpty) throw new UsageError('message body is empty: pass --body <text> or pipe it on stdin (--allow-empty posts an empty message)');
  const bytes = Buffer.byteLength(body);
  if (bytes > maxBodyBytes) {
    throw new UsageError(`message body is ${bytes} bytes, over the ${maxBodyBytes}-byte limit; write it to a file and post a short message with --link <path> (or raise --max-body-bytes)`);
  }
  // A project's bus is the first thing a new user posts to: create its folder (a task's bus still
  // needs its task folder).
  if (firstOf(opts.project) && !firstOf(opts.task)) createProjectBusFolder(busPath);
  const writer = createBusWriters({ maxBodyBytes })(busPath);
  try {
    const msg = await writer.append({ ...header, body });
    io.stdout.write(`msg_id: ${msg.msg_id}\n`);
  } finally {
    writer.close();
  }
}
