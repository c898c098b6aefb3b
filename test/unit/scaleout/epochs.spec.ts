import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { admitRecord, applyRecord, decodeRecord, decodeRoutedWrite, EpochFloors, recordHeaders, replicaEpochsFile, type ChangeRecord } from '@app/scaleout';

const P = 'proj';
const T = 'task-20260101-000000-abc';
const put = (epoch?: number): ChangeRecord => ({ path: `${P}/${T}/output.md`, op: 'put', offset: 0, data: Buffer.from(`by ${epoch}`), ...(epoch === undefined ? {} : { epoch }) });

describe('cross-host fencing epochs (issue #31)', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'epochs-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('carries the epoch in the record headers; a claim record is <project>/<task>/.claim with an epoch and writes nothing', () => {
    const r = put(7);
    expect(decodeRecord(recordHeaders(r), r.data, P, T)).toEqual(r);
    const claim: ChangeRecord = { path: `${P}/${T}/.claim`, op: 'claim', offset: 0, data: Buffer.alloc(0), epoch: 9 };
    expect(decodeRecord(recordHeaders(claim), claim.data, P, T)).toEqual(claim);
    expect(applyRecord(root, claim)).toBe(false);
    expect(existsSync(join(root, P))).toBe(false);
    expect(() => decodeRecord(recordHeaders({ ...claim, epoch: undefined }), claim.data, P, T)).toThrow(/claim record/);
    expect(() => decodeRecord(recordHeaders({ ...claim, path: `${P}/${T}/x` }), claim.data, P, T)).toThrow(/claim record/);
    const h = recordHeaders(r);
    h.set('Cl-Epoch', '-1');
    expect(() => decodeRecord(h, r.data, P, T)).toThrow(/epoch is not a number/);
  });

  it('drops a record older than the newest epoch seen for its task, and keeps the floor across a restart', () => {
    const file = replicaEpochsFile(root);
    const floors = new EpochFloors(file);
    expect(admitRecord(floors, P, T, put())).toBe(true); // a record of a build before fencing, nothing newer seen
    expect(admitRecord(floors, P, T, put(3))).toBe(true);
    expect(admitRecord(floors, P, T, put(5))).toBe(true);
    expect(admitRecord(floors, P, T, put(5))).toBe(true);
    expect(admitRecord(floors, P, T, put(3))).toBe(false);
    expect(admitRecord(floors, P, T, put())).toBe(false);
    // other tasks and the project bus (several writers) are not fenced by this task's epoch
    expect(admitRecord(floors, P, 'task-20260101-000000-other', put(1))).toBe(true);
    expect(admitRecord(floors, P, '_project', { path: `${P}/PROJECT-MESSAGE-BUS.md`, op: 'entries', offset: 0, data: Buffer.alloc(0) })).toBe(true);
    const restarted = new EpochFloors(file);
    expect(restarted.floor(P, T)).toBe(5);
    expect(admitRecord(restarted, P, T, put(4))).toBe(false);
  });

  it('routed writes carry the epoch the server knows; a bad one is refused with the envelope', () => {
    const write = { projectId: P, taskId: T, op: 'done' };
    const ok = decodeRoutedWrite(Buffer.from(JSON.stringify({ writeId: 'w1', epoch: 4, write })));
    expect(ok.epoch).toBe(4);
    expect(decodeRoutedWrite(Buffer.from(JSON.stringify({ writeId: 'w1', write }))).epoch).toBeUndefined();
    for (const epoch of [0, -2, 1.5, '3']) {
      expect(() => decodeRoutedWrite(Buffer.from(JSON.stringify({ writeId: 'w1', epoch, write })))).toThrow(/invalid epoch/);
    }
  });
});
