import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireRunSlot, queueDir } from '@app/runner';
import { waitFor } from '../../utils/wait';

describe('run slots (D13)', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'slots-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a limit of 0 is unlimited and writes nothing', async () => {
    const slot = await acquireRunSlot({ root, limit: 0, runId: 'r1' });
    slot.release();
    expect(existsSync(join(root, '.conductor'))).toBe(false);
  });

  it('holds at most N slots; a waiting run is visible in the queue until a slot frees', async () => {
    const a = await acquireRunSlot({ root, limit: 2, runId: 'a' });
    const b = await acquireRunSlot({ root, limit: 2, runId: 'b' });
    expect(new Set([a.index, b.index])).toEqual(new Set([0, 1]));
    let gotC = false;
    const c = acquireRunSlot({ root, limit: 2, runId: 'c', pollMs: 10 }).then((s) => {
      gotC = true;
      return s;
    });
    await waitFor('c to queue', () => existsSync(join(queueDir(root), 'c')));
    expect(readdirSync(queueDir(root))).toEqual(['c']);
    expect(gotC).toBe(false);
    b.release();
    const slotC = await c;
    expect(slotC.index).toBe(b.index);
    expect(readdirSync(queueDir(root))).toEqual([]);
    a.release();
    slotC.release();
  });

  it('a queued run gives up when its signal aborts', async () => {
    const a = await acquireRunSlot({ root, limit: 1, runId: 'a' });
    const controller = new AbortController();
    const waiting = acquireRunSlot({ root, limit: 1, runId: 'b', pollMs: 10, signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toThrow('acquire run slot: cancelled while queued');
    expect(readdirSync(queueDir(root))).toEqual([]);
    a.release();
  });
});
