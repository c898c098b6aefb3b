import { followBus } from '@app/messagebus/follow';
import { readMessages } from '@app/messagebus/reader';
import type { BusMessage } from '@app/messagebus/types';
import { validateProjectId, validateTaskId } from '@app/storage/ids';
import { existingProjectDir, existingTaskDir } from '@app/storage/known-names';
import { createRunsLayout } from '@app/storage/seams.providers';
import type { ChangeFeed } from '@app/storage/change-feed';
import { UsageError } from '../../common/cli-errors';
import { withConfigFlag, type BusReadOptions } from './bus-flags';
import { busFileFor, busFromWorkingDir, resolveBusRoot, scopeFromRunFolder, scopeFromTaskFolder, type BusEnv } from './bus-scope';

export interface ReadIo extends BusEnv {
  stdout: { write(s: string): unknown };
  /**
   * What a --follow needs (the Nest path's BusReadCommand): the composition root's change feed, and
   * a promise that resolves when the follow should end (SIGINT/SIGTERM in the CLI).
   */
  follow?: { feed: ChangeFeed; until: Promise<void> };
}

/** Bus file for `bus read`: --project[/--task] → $JRUN_MESSAGE_BUS → run-info → project home → discovery. */
export function resolveReadBus(opts: BusReadOptions, e: BusEnv): string {
  if (opts.project !== undefined) validateProjectId(opts.project);
  if (opts.task !== undefined) validateTaskId(opts.task);
  let project = opts.project?.trim();
  const task = opts.task?.trim();
  if (!project && task) {
    project = scopeFromRunFolder(e.env.JRUN_RUN_FOLDER).project ?? scopeFromTaskFolder(e.env.JRUN_TASK_FOLDER).project ?? e.env.JRUN_PROJECT_ID?.trim();
    if (!project) throw new UsageError('--task needs --project (or $JRUN_PROJECT_ID)');
    validateProjectId(project);
  }
  if (project) {
    // a project or task named on the command line must exist (did-you-mean otherwise); an empty bus reads as nothing
    const layout = createRunsLayout(resolveBusRoot(opts.root, e));
    if (task) existingTaskDir(layout, project, task);
    else existingProjectDir(layout, project);
    return busFileFor(layout.root, project, task);
  }
  const fromEnv = e.env.JRUN_MESSAGE_BUS?.trim();
  if (fromEnv) return fromEnv;
  return busFromWorkingDir(opts.root, e);
}

export function parseTail(value: string | number | undefined): number {
  if (value === undefined) return 20;
  if (typeof value === 'number') return value;
  if (!/^\s*-?\d+\s*$/.test(value)) throw new UsageError(`invalid --tail "${value}": must be an integer`);
  return Number(value.trim());
}

/** `[YYYY-MM-DD HH:MM:SS] (TYPE) body` in UTC, as upstream prints. */
export function formatMessage(m: BusMessage): string {
  const ts = m.ts.toISOString();
  const stamp = `${ts.slice(0, ts.indexOf('T'))} ${ts.slice(ts.indexOf('T') + 1, ts.indexOf('T') + 9)}`;
  return `[${stamp}] (${m.type}) ${m.body}\n`;
}

export function formatJson(m: BusMessage): string {
  return JSON.stringify({ ...m, ts: m.ts.toISOString() }) + '\n';
}

/** `run-agent bus read`: prints the last --tail messages; with --follow keeps printing new ones. */
export async function runBusRead(opts: BusReadOptions, rawIo: ReadIo): Promise<void> {
  const io = withConfigFlag(rawIo, opts.config);
  const tail = parseTail(opts.tail);
  const busPath = resolveReadBus(opts, io);
  const format = opts.json ? formatJson : formatMessage;
  const print = (msgs: BusMessage[]) => {
    if (msgs.length > 0) io.stdout.write(msgs.map(format).join(''));
  };
  const sinceId = opts.since?.trim() || undefined;
  if (!opts.follow) {
    print(readMessages(busPath, { sinceId, last: tail > 0 ? tail : 0 }));
    return;
  }
  // the fast path leaves --follow to the Nest path, which passes its feed
  if (!io.follow) throw new Error('bus read --follow needs the change feed of its composition root');
  const stop = followBus(busPath, { sinceId, last: tail > 0 ? tail : 0, feed: io.follow.feed }, print);
  try {
    await io.follow.until;
  } finally {
    stop();
  }
}
