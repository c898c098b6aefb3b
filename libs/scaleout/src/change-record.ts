import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeSync, constants } from 'node:fs';
import { dirname, join } from 'node:path';
import { newHeaders, type MsgHdrs } from './nats';
import { parseBus } from '@app/messagebus';
import { tryFlock, unflock, validateProjectId, validateTaskId, writeFileAtomic } from '@app/storage';
import { PROJECT_TOKEN, ScaleoutError } from './subjects';

/**
 * One change of a worker's task files. `append`: bytes at `offset` of an append-only file
 * (idempotent: bytes already there are skipped). `put`: the whole new content. `delete`: the file
 * is gone. `entries`: complete message-bus entries of a project bus, which several hosts append
 * to; applied once, recognised by their first msg_id. `claim`: no file change, the first record of
 * a host that claimed the task (path `<project>/<task>/.claim`): it raises the task's epoch.
 * `epoch`: the sequence of the publishing host's claim of the task (see epochs.ts); absent on
 * project-bus records (several writers) and on records of builds before fencing.
 */
export type ChangeOp = 'append' | 'put' | 'delete' | 'entries' | 'claim';
export interface ChangeRecord {
  path: string;
  op: ChangeOp;
  offset: number;
  data: Buffer;
  epoch?: number;
}

const OPS: readonly ChangeOp[] = ['append', 'put', 'delete', 'entries', 'claim'];
export const CLAIM_MARKER = '.claim';
const SEGMENT = /^[A-Za-z0-9._-]{1,255}$/;
export const PROJECT_BUS = 'PROJECT-MESSAGE-BUS.md';

export function recordHeaders(rec: ChangeRecord): MsgHdrs {
  const h = newHeaders();
  h.set('Cl-Path', rec.path);
  h.set('Cl-Op', rec.op);
  h.set('Cl-Offset', String(rec.offset));
  if (rec.epoch !== undefined) h.set('Cl-Epoch', String(rec.epoch));
  return h;
}

/**
 * The one validator of incoming records (they reach file names): the path must be
 * `<project>/<task>/…` matching the subject's tokens (or `<project>/PROJECT-MESSAGE-BUS.md` for
 * the project token), with plain segments only.
 */
export function decodeRecord(hdrs: MsgHdrs | undefined, data: Uint8Array, projectId: string, taskToken: string): ChangeRecord {
  const path = hdrs?.get('Cl-Path') ?? '';
  const op = (hdrs?.get('Cl-Op') ?? '') as ChangeOp;
  const offsetText = hdrs?.get('Cl-Offset') ?? '';
  const epochText = hdrs?.get('Cl-Epoch') ?? '';
  const bad = (why: string) => new ScaleoutError('INVALID_RECORD', `invalid change record for "${path}": ${why}`);
  if (!OPS.includes(op)) throw bad(`unknown op "${op}"`);
  if (!/^\d{1,15}$/.test(offsetText)) throw bad('offset is not a number');
  if (epochText !== '' && !/^\d{1,15}$/.test(epochText)) throw bad('epoch is not a number');
  const segments = path.split('/');
  if (segments.some((s: string) => !SEGMENT.test(s) || s === '.' || s === '..')) throw bad('path has an unsafe segment');
  try {
    validateProjectId(projectId);
    if (taskToken !== PROJECT_TOKEN) validateTaskId(taskToken);
  } catch (err) {
    throw bad((err as Error).message);
  }
  if (segments[0] !== projectId) throw bad('path is outside the subject project');
  if (taskToken === PROJECT_TOKEN) {
    if (segments.length !== 2 || segments[1] !== PROJECT_BUS || op !== 'entries') throw bad('project records must be entries of the project bus');
  } else if (segments.length < 3 || segments[1] !== taskToken || op === 'entries') {
    throw bad('path is outside the subject task');
  } else if (op === 'claim' && (segments.length !== 3 || segments[2] !== CLAIM_MARKER || epochText === '')) {
    throw bad(`a claim record is <project>/<task>/${CLAIM_MARKER} with an epoch`);
  }
  const rec: ChangeRecord = { path, op, offset: Number(offsetText), data: Buffer.from(data) };
  if (epochText !== '' && taskToken !== PROJECT_TOKEN) rec.epoch = Number(epochText);
  return rec;
}

const pauseCell = new Int32Array(new SharedArrayBuffer(4));
/** Bus locks are held for microseconds: a short synchronous pause between attempts. */
function pause(ms: number): void {
  Atomics.wait(pauseCell, 0, 0, ms);
}

function lockedAppend(file: string, data: Buffer, at?: number): void {
  const fd = openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | (at === undefined ? constants.O_APPEND : 0), 0o644);
  try {
    const deadline = Date.now() + 10_000;
    while (!tryFlock(fd, 'ex')) {
      if (Date.now() > deadline) throw new ScaleoutError('INVALID_RECORD', `lock timeout on ${file}`);
      pause(5);
    }
    try {
      writeSync(fd, data, 0, data.length, at ?? null);
    } finally {
      unflock(fd);
    }
  } finally {
    closeSync(fd);
  }
}

function readRange(file: string, at: number, length: number): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const buf = Buffer.alloc(length);
    const n = readSync(fd, buf, 0, length, at);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function firstMsgId(data: Buffer): string | undefined {
  return parseBus(data)[0]?.msg_id;
}

/** Applies one record under `root`; returns false when it was already applied. */
export function applyRecord(root: string, rec: ChangeRecord): boolean {
  // a claim raises the task's epoch (the caller's EpochFloors) and changes no file
  if (rec.op === 'claim') return false;
  const file = join(root, rec.path);
  mkdirSync(dirname(file), { recursive: true });
  switch (rec.op) {
    case 'put':
      if (existsSync(file) && readFileSync(file).equals(rec.data)) return false;
      writeFileAtomic(file, rec.data);
      return true;
    case 'delete':
      if (!existsSync(file)) return false;
      rmSync(file, { force: true });
      return true;
    case 'append': {
      const size = existsSync(file) ? statSync(file).size : 0;
      const end = rec.offset + rec.data.length;
      if (size < rec.offset) throw new ScaleoutError('GAP', `${rec.path}: record at offset ${rec.offset} but the replica has ${size} bytes`);
      // bytes the replica already has must be these bytes (a replay), not a local write
      const overlap = Math.min(size, end) - rec.offset;
      if (overlap > 0 && !readRange(file, rec.offset, overlap).equals(rec.data.subarray(0, overlap))) {
        throw new ScaleoutError('GAP', `${rec.path}: the replica diverged from the worker at offset ${rec.offset} (written on the server?)`);
      }
      if (size >= end) return false;
      lockedAppend(file, rec.data.subarray(size - rec.offset), size);
      return true;
    }
    case 'entries': {
      // entries from several hosts meet here, and a resent snapshot repeats entries: each entry
      // is appended once, recognised by its msg_id
      const have = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const fresh = splitEntries(rec.data).filter((e) => !e.id || !have.includes(`msg_id: ${e.id}\n`));
      if (fresh.length === 0) return false;
      // like BusWriter, one newline separates entries (the first entry of a file has none)
      const text = fresh.map((e) => e.text).join('\n');
      lockedAppend(file, Buffer.from(have.length > 0 ? `\n${text}` : text));
      return true;
    }
  }
}

/** The entries of a bus chunk (each `---\nmsg_id: …` up to the next), with their msg_ids. */
export function splitEntries(data: Buffer): { id: string | undefined; text: string }[] {
  const text = data.toString('utf8');
  const starts: number[] = [];
  const re = /(^|\n)---\nmsg_id: /g;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index + m[1].length);
  if (starts.length === 0) return text.trim() ? [{ id: firstMsgId(data), text }] : [];
  return starts.map((at, i) => {
    // up to the newline that separates it from the next entry
    const chunk = text.slice(at, i + 1 < starts.length ? starts[i + 1] - 1 : text.length);
    return { id: /^---\nmsg_id: (\S+)\n/.exec(chunk)?.[1], text: chunk };
  });
}

/** Reads [from, end of file) of a bus file under a shared flock, so only whole entries are read. */
export function readBusTail(file: string, from: number): { data: Buffer; size: number; ino: number } {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const deadline = Date.now() + 5000;
    while (!tryFlock(fd, 'sh')) {
      if (Date.now() > deadline) throw new ScaleoutError('INVALID_RECORD', `lock timeout on ${file}`);
      pause(5);
    }
    try {
      const st = fstatSync(fd);
      const start = Math.min(from, st.size);
      const data = Buffer.alloc(st.size - start);
      let got = 0;
      while (got < data.length) {
        const n = readSync(fd, data, got, data.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      return { data: data.subarray(0, got), size: start + got, ino: st.ino };
    } finally {
      unflock(fd);
    }
  } finally {
    closeSync(fd);
  }
}
