import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
    expect(admitRecord(floors, 'w1', P, T, put())).toBe(true); // a record of a build before fencing, nothing newer seen
    expect(admitRecord(floors, 'w1', P, T, put(3))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(5))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(5))).toBe(true);
    // another host claimed it (epoch 7): the first owner's late records are dropped
    expect(admitRecord(floors, 'w2', P, T, put(7))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(5))).toBe(false);
    expect(admitRecord(floors, 'w1', P, T, put(3))).toBe(false);
    expect(admitRecord(floors, 'w1', P, T, put())).toBe(false);
    // other tasks and the project bus (several writers) are not fenced by this task's epoch
    expect(admitRecord(floors, 'w1', P, 'task-20260101-000000-other', put(1))).toBe(true);
    expect(admitRecord(floors, 'w1', P, '_project', { path: `${P}/PROJECT-MESSAGE-BUS.md`, op: 'entries', offset: 0, data: Buffer.alloc(0) })).toBe(true);
    const restarted = new EpochFloors(file);
    expect(restarted.floor(P, T)).toBe(7);
    expect(admitRecord(restarted, 'w1', P, T, put(6))).toBe(false);
    expect(admitRecord(restarted, 'w2', P, T, put(6))).toBe(false);
    expect(admitRecord(restarted, 'w2', P, T, put(7))).toBe(true);
  });

  it("keeps the current owner's records of its own earlier epoch: a file record delayed behind the claim record of its re-claim", () => {
    const claim = (epoch: number): ChangeRecord => ({ path: `${P}/${T}/.claim`, op: 'claim', offset: 0, data: Buffer.alloc(0), epoch });
    const file = replicaEpochsFile(root);
    const floors = new EpochFloors(file);
    expect(admitRecord(floors, 'w1', P, T, claim(3))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(3))).toBe(true);
    // w1 claims the task again (a redelivery after a NATS restart): its claim record overtakes a
    // file record of its first claim that publishDurably was still retrying through the outage
    expect(admitRecord(floors, 'w1', P, T, claim(8))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(3))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(8))).toBe(true);
    // also after a replica restart
    expect(admitRecord(new EpochFloors(file), 'w1', P, T, put(3))).toBe(true);
    // a host that never owned it since epoch 3 is still fenced
    expect(admitRecord(floors, 'w2', P, T, put(5))).toBe(false);
    // w2 takes over, then w1 claims it back: w1's records from before w2's claim are fenced, w2's too
    expect(admitRecord(floors, 'w2', P, T, claim(10))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(8))).toBe(false);
    expect(admitRecord(floors, 'w1', P, T, claim(12))).toBe(true);
    expect(admitRecord(floors, 'w1', P, T, put(8))).toBe(false);
    expect(admitRecord(floors, 'w2', P, T, put(10))).toBe(false);
    expect(admitRecord(floors, 'w1', P, T, put(12))).toBe(true);
  });

  it('reads the floors file of the format before owner hosts (a bare epoch fences every older record)', () => {
    const file = replicaEpochsFile(root);
    new EpochFloors(file).admit(P, T, 1, 'w1'); // creates the directory
    writeFileSync(file, JSON.stringify({ [`${P}/${T}`]: 5, [`${P}/bad`]: { epoch: 2, since: 4, host: 'w1' } }));
    const floors = new EpochFloors(file);
    expect(floors.floor(P, T)).toBe(5);
    expect(floors.floor(P, 'bad')).toBe(0);
    expect(admitRecord(floors, 'w1', P, T, put(4))).toBe(false);
    expect(admitRecord(floors, 'w1', P, T, put(5))).toBe(true);
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
