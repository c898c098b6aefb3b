import { describe, expect, it } from 'vitest';
import type { BusMessage } from '../src/api/types';
import { filterThreads, mergeMessages, messageTypes, parentIds, threadMessages } from '../src/data/messages';

const msg = (id: string, sec: number, extra: Partial<BusMessage> = {}): BusMessage => ({
  msg_id: id,
  timestamp: `2026-01-01T00:00:${String(sec).padStart(2, '0')}Z`,
  type: 'INFO',
  body: `body ${id}`,
  ...extra,
});

describe('message threading', () => {
  it('reads parent ids in SSE, REST and Go forms', () => {
    expect(parentIds(msg('a', 1, { parents: ['x', { msg_id: 'y' }, { MsgID: 'z' }] }))).toEqual(['x', 'y', 'z']);
    expect(parentIds(msg('a', 1, { parents: null }))).toEqual([]);
  });

  it('puts replies under their parent, in time order, and unknown parents at the root', () => {
    const threads = threadMessages([
      msg('q', 1, { type: 'QUESTION' }),
      msg('a2', 3, { type: 'ANSWER', parents: ['q'] }),
      msg('a1', 2, { type: 'ANSWER', parents: [{ msg_id: 'q' }] }),
      msg('deep', 4, { parents: ['a1'] }),
      msg('orphan', 5, { parents: ['missing'] }),
    ]);
    expect(threads.map((t) => t.message.msg_id)).toEqual(['q', 'orphan']);
    expect(threads[0].replies.map((t) => t.message.msg_id)).toEqual(['a1', 'a2']);
    expect(threads[0].replies[0].replies.map((t) => t.message.msg_id)).toEqual(['deep']);
  });

  it('breaks parent loops instead of losing messages', () => {
    const threads = threadMessages([msg('a', 1, { parents: ['b'] }), msg('b', 2, { parents: ['a'] }), msg('s', 3, { parents: ['s'] })]);
    const count = (ts: typeof threads): number => ts.reduce((n, t) => n + 1 + count(t.replies), 0);
    expect(count(threads)).toBe(3);
  });

  it('merges duplicates from REST and SSE', () => {
    const merged = mergeMessages([msg('a', 1), msg('b', 2)], [msg('b', 2), msg('c', 3)]);
    expect(merged.map((m) => m.msg_id)).toEqual(['a', 'b', 'c']);
  });

  it('filters threads by type, keeping whole threads', () => {
    const threads = threadMessages([msg('q', 1, { type: 'QUESTION' }), msg('a', 2, { type: 'ANSWER', parents: ['q'] }), msg('f', 3, { type: 'FACT' })]);
    expect(filterThreads(threads, 'ANSWER').map((t) => t.message.msg_id)).toEqual(['q']);
    expect(filterThreads(threads, 'FACT').map((t) => t.message.msg_id)).toEqual(['f']);
    expect(filterThreads(threads, '').length).toBe(2);
    expect(messageTypes([msg('q', 1, { type: 'QUESTION' }), msg('f', 2, { type: 'FACT' }), msg('g', 3, { type: 'FACT' })])).toEqual(['FACT', 'QUESTION']);
  });
});
