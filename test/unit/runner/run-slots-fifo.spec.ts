import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireRunSlot, queueDir, RunSlot, takeTurn, TurnState } from '@app/runner';
import { waitFor } from '../../utils/wait';

// The queue is stepped by hand (takeTurn = one look at the queue, as each poll does): the order of
// events is fixed by the test, so FIFO can be asserted without timing. Files and flocks are real.
describe('run slots: strict FIFO queue (#18)', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'slots-fifo-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const turn = (runId: string, state: TurnState, limit = 1) => takeTurn({ root, limit, runId }, state);
  const held: RunSlot[] = [];
  afterEach(() => held.splice(0).forEach((s) => s.release()));
  const grant = async (runId: string, state: TurnState, limit = 1): Promise<RunSlot> => {
    const s = await turn(runId, state, limit);
    expect(s).toBeDefined();
    held.push(s!);
    return s!;
  };
  const marker = (runId: string) => readFileSync(join(queueDir(root), runId), 'utf8');

  it('a newcomer never takes a free slot while an older waiter is queued', async () => {
    const a = await grant('a', {});
    expect(a.ticket).toBe(1);
    const b: TurnState = {};
    expect(await turn('b', b)).toBeUndefined();
    expect(marker('b')).toBe(`${process.pid}\nticket: 2\n`);
    a.release();
    // the slot is free now, but b (ticket 2) waits longer than e
    const e: TurnState = {};
    expect(await turn('e', e)).toBeUndefined();
    expect(readdirSync(queueDir(root)).sort()).toEqual(['b', 'e']);
    const sb = await grant('b', b);
    expect(sb.ticket).toBe(2);
    expect(readdirSync(queueDir(root))).toEqual(['e']);
    expect(await turn('e', e)).toBeUndefined();
    sb.release();
    expect((await grant('e', e)).ticket).toBe(3);
    expect(readdirSync(queueDir(root))).toEqual([]);
  });

  it('with free slots for all, waiters are granted in ticket order', async () => {
    const x = await grant('x', {}, 2);
    const y = await grant('y', {}, 2);
    const w1: TurnState = {};
    const w2: TurnState = {};
    const w3: TurnState = {};
    for (const [id, s] of [['w1', w1], ['w2', w2], ['w3', w3]] as const) expect(await turn(id, s, 2)).toBeUndefined();
    x.release();
    y.release();
    // two slots free: w3 and w2 still may not pass w1
    expect(await turn('w3', w3, 2)).toBeUndefined();
    expect(await turn('w2', w2, 2)).toBeUndefined();
    await grant('w1', w1, 2);
    expect(await turn('w3', w3, 2)).toBeUndefined();
    await grant('w2', w2, 2);
    expect(await turn('w3', w3, 2)).toBeUndefined(); // both slots held now
  });

  it('a run back from a rate-limit wait re-queues at its original place, ahead of newer waiters', async () => {
    const first = await grant('a1', {});
    first.release(); // a1 was refused with a rate limit: its loop waits with the slot released
    held.splice(0);
    const c = await grant('c', {}); // c takes the released slot meanwhile
    const d: TurnState = {};
    expect(await turn('d', d)).toBeUndefined(); // d queues behind c
    // the reset has passed: the loop's next run queues with the ticket of its refused run
    const again: TurnState = { ticket: first.ticket };
    expect(await turn('a2', again)).toBeUndefined();
    expect(marker('a2')).toBe(`${process.pid}\nticket: 1\n`);
    c.release();
    expect(await turn('d', d)).toBeUndefined();
    expect((await grant('a2', again)).ticket).toBe(1);
  });

  it('the marker of a dead waiter (nobody holds its flock) is removed and does not block the queue', async () => {
    mkdirSync(queueDir(root), { recursive: true });
    // what a SIGKILLed waiter leaves behind: its marker, no longer flocked by anyone
    writeFileSync(join(queueDir(root), 'ghost'), '999999\nticket: 0\n');
    const s = await grant('live', {});
    expect(s.ticket).toBe(1);
    expect(existsSync(join(queueDir(root), 'ghost'))).toBe(false);
  });

  it('acquireRunSlot polls its turn: several in-process waiters are served in arrival order', async () => {
    const a = await acquireRunSlot({ root, limit: 1, runId: 'a' });
    const order: string[] = [];
    const waiters: Promise<RunSlot>[] = [];
    for (const id of ['b', 'c', 'd']) {
      waiters.push(acquireRunSlot({ root, limit: 1, runId: id, pollMs: 5 }).then((s) => (order.push(id), s)));
      await waitFor(`${id} to queue`, () => existsSync(join(queueDir(root), id)));
    }
    a.release();
    for (let i = 0; i < 3; i++) {
      await waitFor(`grant ${i + 1}`, () => order.length === i + 1);
      (await waiters[i]).release();
    }
    expect(order).toEqual(['b', 'c', 'd']);
  });
});
