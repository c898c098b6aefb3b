/**
 * A runs root built the way a hostile or broken disk would leave it (issue #29 acceptance): run
 * files that are symlinks out of the root or to /dev/zero, FIFOs in place of run files, folders that
 * are symlinks out of the root, message buses that are not regular files, and a very large message bus. Each kind is one builder in
 * HOSTILE_ENTRIES, so another kind (corrupt records, …) is one more entry.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { serializeEntry } from '@app/messagebus';
import { seedCorruptRoot } from './corrupt-records';
import { seedRun } from './run-fixtures';

export const HOSTILE_PROJECT = 'hostile';
export const HOSTILE_TASK = 'task-20260101-120000-hostile';
/** The project of HOSTILE_ENTRIES.busNotFiles: its bus is a FIFO, and so are (or worse) its tasks' buses. */
export const BUS_PROJECT = 'bus-not-files';
export const BUS_TASKS = {
  fifo: 'task-20260101-120000-bus-fifo',
  devZero: 'task-20260101-120000-bus-zero',
  folder: 'task-20260101-120000-bus-folder',
  good: 'task-20260101-120000-bus-good',
} as const;

export interface HostileContext {
  root: string;
  /** A folder outside the root holding a secret file and a run tree. */
  outside: string;
  /** A seeded (finished) run of HOSTILE_TASK; returns its folder. */
  run(runId: string, stdout?: string): string;
}

export type HostileEntry = (ctx: HostileContext) => void;

function replaceWith(file: string, make: (file: string) => void): void {
  fs.rmSync(file, { force: true });
  make(file);
}

const fifo = (file: string) => execFileSync('mkfifo', [file]);

/** The kinds of bad entries; extend by adding a builder. */
export const HOSTILE_ENTRIES: Record<string, HostileEntry> = {
  devZeroLinks: (ctx) => {
    const dir = ctx.run('20260101-1200000000-900-1');
    for (const f of ['agent-stdout.txt', 'agent-stderr.txt', 'output.md']) replaceWith(path.join(dir, f), (p) => fs.symlinkSync('/dev/zero', p));
  },
  fifos: (ctx) => {
    const dir = ctx.run('20260101-1200000000-900-2');
    for (const f of ['agent-stdout.txt', 'agent-stderr.txt', 'output.md', 'prompt.md']) replaceWith(path.join(dir, f), fifo);
    replaceWith(path.join(ctx.root, HOSTILE_PROJECT, HOSTILE_TASK, 'TASK.md'), fifo);
  },
  symlinksOut: (ctx) => {
    const dir = ctx.run('20260101-1200000000-900-3');
    for (const f of ['agent-stdout.txt', 'agent-stderr.txt', 'prompt.md']) replaceWith(path.join(dir, f), (p) => fs.symlinkSync(path.join(ctx.outside, 'secret.txt'), p));
  },
  foldersOut: (ctx) => {
    seedRun(ctx.outside, 'elsewhere', 'task-20260101-120000-elsewhere', '20260101-1200000000-900-4', {}, 'secret run\n');
    fs.symlinkSync(path.join(ctx.outside, 'elsewhere', 'task-20260101-120000-elsewhere'), path.join(ctx.root, HOSTILE_PROJECT, 'task-20260101-120000-elsewhere'));
    fs.symlinkSync(path.join(ctx.outside, 'elsewhere'), path.join(ctx.root, 'linked-project'));
  },
  /** A FIFO and a /dev/zero link in place of run-info.yaml: shown as corrupt runs, never read. */
  recordsNotFiles: (ctx) => {
    replaceWith(path.join(ctx.run('20260101-1200000000-900-5'), 'run-info.yaml'), fifo);
    replaceWith(path.join(ctx.run('20260101-1200000000-900-6'), 'run-info.yaml'), (p) => fs.symlinkSync('/dev/zero', p));
  },
  /** BUS_PROJECT: a FIFO project bus; task buses that are a FIFO, a /dev/zero link, a folder; one good task. */
  busNotFiles: (ctx) => {
    const taskDir = (t: string) => path.join(ctx.root, BUS_PROJECT, t);
    Object.values(BUS_TASKS).forEach((t, i) => seedRun(ctx.root, BUS_PROJECT, t, `20260101-1200000000-901-${i + 1}`, {}, 'ok\n'));
    fifo(path.join(ctx.root, BUS_PROJECT, 'PROJECT-MESSAGE-BUS.md'));
    fifo(path.join(taskDir(BUS_TASKS.fifo), 'TASK-MESSAGE-BUS.md'));
    fs.symlinkSync('/dev/zero', path.join(taskDir(BUS_TASKS.devZero), 'TASK-MESSAGE-BUS.md'));
    fs.mkdirSync(path.join(taskDir(BUS_TASKS.folder), 'TASK-MESSAGE-BUS.md'));
    fs.writeFileSync(path.join(taskDir(BUS_TASKS.good), 'TASK-MESSAGE-BUS.md'), '');
    // the needs-input index makes the questions scan read the task's bus
    fs.writeFileSync(path.join(taskDir(BUS_TASKS.fifo), 'NEEDS-INPUT.json'), '{}');
  },
  /** Projects `bad` (a corrupt run-info of every kind, corrupt task state files) and `good`. */
  corruptRecords: (ctx) => seedCorruptRoot(ctx.root),
};

/** Writes a bus of `count` messages straight to disk (the writer's format, no per-message fsync); returns the path. */
export function writeLargeBus(file: string, count: number, projectId: string, taskId = ''): string {
  const fd = fs.openSync(file, 'w');
  try {
    const base = Date.UTC(2026, 0, 1, 12, 0, 0);
    let batch = '';
    for (let i = 0; i < count; i++) {
      const t = new Date(base + i * 1000);
      const stamp = t.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
      const msgId = `MSG-${stamp}-${String(i % 1e9).padStart(9, '0')}-PID${String(10000 + (i % 90000)).padStart(5, '0')}-${String(i % 10000).padStart(4, '0')}`;
      // entries are separated by an empty line, as BusWriter writes them
      if (i > 0) batch += '\n';
      batch += serializeEntry({ msgId, tsText: t.toISOString(), type: 'INFO', projectId, taskId, runId: '' }, `message ${i} ${'x'.repeat(60)}`);
      if (batch.length > 1 << 20) {
        fs.writeSync(fd, batch);
        batch = '';
      }
    }
    fs.writeSync(fd, batch);
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

/**
 * Fills `root` with the hostile entries named in `kinds` (all by default) plus, when
 * `busMessages` > 0, a project bus of that many messages. `outside` is created next to the root.
 */
export function buildHostileRoot(root: string, opts: { kinds?: string[]; busMessages?: number } = {}): HostileContext {
  const outside = fs.mkdtempSync(path.join(path.dirname(root), 'outside-'));
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret outside the runs root\n');
  const ctx: HostileContext = { root, outside, run: (runId, stdout = 'ok\n') => seedRun(root, HOSTILE_PROJECT, HOSTILE_TASK, runId, {}, stdout) };
  ctx.run('20260101-1200000000-900-0');
  fs.writeFileSync(path.join(root, HOSTILE_PROJECT, HOSTILE_TASK, 'TASK.md'), 'do it\n');
  for (const kind of opts.kinds ?? Object.keys(HOSTILE_ENTRIES)) HOSTILE_ENTRIES[kind](ctx);
  if (opts.busMessages) {
    writeLargeBus(path.join(root, HOSTILE_PROJECT, 'PROJECT-MESSAGE-BUS.md'), opts.busMessages, HOSTILE_PROJECT);
    writeLargeBus(path.join(root, HOSTILE_PROJECT, HOSTILE_TASK, 'TASK-MESSAGE-BUS.md'), Math.min(opts.busMessages, 20_000), HOSTILE_PROJECT, HOSTILE_TASK);
  }
  return ctx;
}
