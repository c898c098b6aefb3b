import { existsSync, lstatSync, readdirSync, readFileSync, type Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ChangeRecord, PROJECT_BUS, readBusTail } from './change-record';
import { changeSubject, PROJECT_TOKEN } from './subjects';

/** Publishes one record; resolves once JetStream stored it. */
export type PublishRecord = (subject: string, rec: ChangeRecord, msgID: string) => Promise<void>;

interface FileState {
  ino: number;
  size: number;
  mtimeMs: number;
  /** Bytes of an append-only file already published. */
  offset: number;
}

const APPEND_ONLY = /(MESSAGE-BUS\.md|^agent-std(out|err)\.txt)$/;
const BUS_FILE = /MESSAGE-BUS\.md$/;
/** Locks and temp files of atomic writes are host-local and never replicated. */
const SKIP = /(\.lock$|\.tmp$|^\.tmp-)/;
const MAX_CHUNK = 512 * 1024;

function walk(dir: string, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (SKIP.test(name)) continue;
    const full = join(dir, name);
    let st: Stats;
    try {
      st = lstatSync(full);
    } catch {
      continue;
    }
    if (st.isDirectory()) walk(full, out);
    else if (st.isFile()) out.push(full);
  }
}

/**
 * Turns every change of the tracked tasks' files (and their projects' buses) into ordered records
 * on `conductor.changes.<host>.<project>.<task>`: appended bytes of append-only files by offset,
 * whole contents of the others, deletions. A record that fails to publish is retried on the next
 * pass from the same state, so a NATS outage delays replication but loses nothing.
 */
export class ChangeTailer {
  private readonly tasks = new Map<string, { projectId: string; taskId: string; epoch?: number }>();
  private readonly files = new Map<string, FileState>();
  private readonly projects = new Set<string>();
  private passing: Promise<void> | undefined;
  /** Bumped by every resend: a resent record gets a new message id (JetStream would drop a repeat). */
  private generation = 0;

  constructor(
    private readonly root: string,
    private readonly host: string,
    private readonly publish: PublishRecord,
  ) {}

  /** `epoch`: this host's claim of the task, carried by every record of it (see epochs.ts). */
  track(projectId: string, taskId: string, epoch?: number): void {
    this.tasks.set(`${projectId}/${taskId}`, { projectId, taskId, epoch });
    this.projects.add(projectId);
  }

  untrack(projectId: string, taskId: string): void {
    this.tasks.delete(`${projectId}/${taskId}`);
  }

  /**
   * Marks the task's files that came from the change stream (`fromStream`: their paths relative to
   * the root) as published. Any other file of the task is this host's own write that never reached
   * the stream (a previous process of this worker killed before publishing, or its orphan stop):
   * left unmarked, the next pass publishes it, so the replica gets what this copy holds.
   */
  adopt(projectId: string, taskId: string, fromStream: ReadonlySet<string>): void {
    const files: string[] = [];
    walk(join(this.root, projectId, taskId), files);
    for (const f of files.filter((file) => fromStream.has(relative(this.root, file)))) {
      const st = lstatSync(f);
      this.files.set(f, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, offset: st.size });
    }
  }

  /**
   * Forgets what was published of a task's files (and its project's bus): the next pass sends
   * them again from offset 0 (a snapshot for a replica that missed records; appends it already
   * has are skipped there).
   */
  resend(projectId: string, taskId: string): void {
    this.generation = Math.max(this.generation + 1, Date.now());
    const prefixes = [join(this.root, projectId, taskId) + sep, join(this.root, projectId, PROJECT_BUS)];
    for (const f of [...this.files.keys()]) if (prefixes.some((p) => f.startsWith(p))) this.files.delete(f);
  }

  /** One pass over every tracked file; concurrent callers share the pass in progress. */
  pass(): Promise<void> {
    if (!this.passing) this.passing = this.runPass().finally(() => (this.passing = undefined));
    return this.passing;
  }

  /** Completes a pass that started after this call (everything written before it is published). */
  async flush(): Promise<void> {
    if (this.passing) await this.passing.catch(() => undefined);
    await this.pass();
  }

  private async runPass(): Promise<void> {
    for (const projectId of this.projects) {
      const bus = join(this.root, projectId, PROJECT_BUS);
      if (existsSync(bus)) await this.scanFile(bus, projectId, PROJECT_TOKEN);
    }
    for (const { projectId, taskId } of [...this.tasks.values()]) {
      const dir = join(this.root, projectId, taskId);
      const files: string[] = [];
      walk(dir, files);
      for (const f of files) await this.scanFile(f, projectId, taskId);
      const prefix = dir + sep;
      for (const known of [...this.files.keys()]) {
        if (known.startsWith(prefix) && !files.includes(known) && !existsSync(known)) {
          await this.emit(projectId, taskId, { path: this.rel(known), op: 'delete', offset: 0, data: Buffer.alloc(0) }, `del:${Date.now()}`);
          this.files.delete(known);
        }
      }
    }
  }

  private rel(file: string): string {
    return relative(this.root, file).split(sep).join('/');
  }

  private emit(projectId: string, token: string, rec: ChangeRecord, key: string): Promise<void> {
    const epoch = token === PROJECT_TOKEN ? undefined : this.tasks.get(`${projectId}/${token}`)?.epoch;
    if (epoch !== undefined) rec = { ...rec, epoch };
    return this.publish(changeSubject(this.host, projectId, token), rec, `${this.host}:${rec.path}:${rec.op}:${rec.offset}:${key}${this.generation ? `:g${this.generation}` : ''}`);
  }

  private async scanFile(file: string, projectId: string, token: string): Promise<void> {
    let st: Stats;
    try {
      st = lstatSync(file);
    } catch {
      return;
    }
    const prev = this.files.get(file);
    if (prev && prev.ino === st.ino && prev.size === st.size && prev.mtimeMs === st.mtimeMs) return;
    const name = file.slice(file.lastIndexOf(sep) + 1);
    const path = this.rel(file);
    const appendOnly = APPEND_ONLY.test(name);
    const grown = prev && prev.ino === st.ino && st.size >= prev.offset;
    if (token === PROJECT_TOKEN || (appendOnly && (grown || !prev))) {
      let offset = grown ? prev!.offset : 0;
      const tail = BUS_FILE.test(name) ? readBusTail(file, offset) : { data: readFileSync(file).subarray(offset), size: st.size, ino: st.ino };
      if (!grown && prev) offset = 0;
      // an empty new file still has to exist on the replica
      if (tail.data.length === 0 && !prev && token !== PROJECT_TOKEN) await this.emit(projectId, token, { path, op: 'put', offset: 0, data: tail.data }, 'empty');
      for (let at = 0; at < tail.data.length; at += MAX_CHUNK) {
        // a project bus chunk must hold whole entries: it is sent in one piece
        const piece = token === PROJECT_TOKEN ? tail.data : tail.data.subarray(at, at + MAX_CHUNK);
        const op = token === PROJECT_TOKEN ? 'entries' : 'append';
        await this.emit(projectId, token, { path, op, offset: offset + at, data: piece }, `${piece.length}`);
        if (token === PROJECT_TOKEN) break;
      }
      this.files.set(file, { ino: tail.ino, size: tail.size, mtimeMs: st.mtimeMs, offset: offset + tail.data.length });
      return;
    }
    const data = readFileSync(file);
    await this.emit(projectId, token, { path, op: 'put', offset: 0, data }, `${st.ino}:${st.mtimeMs}:${data.length}`);
    this.files.set(file, { ino: st.ino, size: data.length, mtimeMs: st.mtimeMs, offset: data.length });
  }
}
