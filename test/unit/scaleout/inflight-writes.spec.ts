import { InflightWrites, type RoutedWrite } from '@app/scaleout';

const P = 'proj';
const T = 'task-20260101-000000-abcde';
const write = (writeId: string, taskId = T): RoutedWrite => ({ writeId, write: { op: 'post', projectId: P, taskId, type: 'USER', body: writeId } });

describe('unconfirmed routed writes', () => {
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
