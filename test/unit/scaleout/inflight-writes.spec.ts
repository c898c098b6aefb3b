import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InflightWrites, type RoutedWrite } from '@app/scaleout';

const P = 'proj';
const T = 'task-20260101-000000-abcde';
const write = (writeId: string, taskId = T): RoutedWrite => ({ writeId, write: { op: 'post', projectId: P, taskId, type: 'USER', body: writeId } });

describe('unconfirmed routed writes', () => {
  it('are kept on disk until confirmed: a restarted server takes them back, oldest first, and drops what it cannot read', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'inflight-')), 'nats-inflight');
    try {
      let now = 1_000_000;
      const before = new InflightWrites(() => now, dir);
      const [a, b, c] = [write('a'), write('b'), write('c')];
      before.add(a, 'w1');
      now += 10;
      before.add(b, 'w1');
      now += 10;
      before.add(c, 'w1');
      before.confirm(b);
      writeFileSync(join(dir, 'broken.json'), '{');
      const lines: string[] = [];
      const after = new InflightWrites(() => now, dir);
      expect(after.restore((l) => lines.push(l)).map((e) => [e.routed.writeId, e.host])).toEqual([['a', 'w1'], ['c', 'w1']]);
      expect(lines.join('\n')).toMatch(/broken\.json dropped/);
      expect(after.takeOver(P, T, 'w2').map((r) => r.writeId)).toEqual(['a', 'c']);
      after.confirm(a);
      after.confirm(c);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true });
    }
  });

  it('hands a taken-over task’s unconfirmed writes to the new owner once, oldest first', () => {
    const w = new InflightWrites();
    const [a, b, c, other] = [write('a'), write('b'), write('c'), write('x', 'task-20260101-000000-other')];
    w.add(a, 'w1');
    w.add(b, 'w1');
    w.add(c, 'w1');
    w.add(other, 'w1');
    w.confirm(b);
    // a record of the same host changes nothing
    expect(w.takeOver(P, T, 'w1')).toEqual([]);
    expect(w.takeOver(P, T, 'w2').map((r) => r.writeId)).toEqual(['a', 'c']);
    // already addressed to w2: not sent again on its next record
    expect(w.takeOver(P, T, 'w2')).toEqual([]);
    w.confirm(a);
    w.confirm(c);
    expect(w.size()).toBe(1);
  });

  it('gives up writes older than the control stream keeps them', () => {
    let now = 0;
    const w = new InflightWrites(() => now);
    w.add(write('old'), 'w1');
    now = 61 * 60 * 1000;
    w.add(write('new'), 'w1');
    expect(w.takeOver(P, T, 'w2').map((r) => r.writeId)).toEqual(['new']);
  });
});
