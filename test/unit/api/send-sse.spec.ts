import { sseFrame } from '../../../apps/api/src/sse/send-sse';
import { sseEvent } from '@app/streams';

// #15: bus streams are written by send-sse.ts; the frame must be what an EventSource parses.
describe('sseFrame', () => {
  it('frames type, id and every data line, and keeps fields on one line', () => {
    const e = sseEvent('message', 'first\nsecond\r\nthird', 'MSG-1\nx');
    expect(sseFrame(e)).toBe('event: message\nid: MSG-1x\ndata: first\ndata: second\ndata: third\n\n');
  });

  it('writes no id line for id-less events and serialises object data', () => {
    expect(sseFrame(sseEvent('heartbeat', {}))).toBe('event: heartbeat\ndata: {}\n\n');
    expect(sseFrame({ data: { a: 1 } })).toBe('data: {"a":1}\n\n');
  });

  it('frames an event once however many streams write it', () => {
    const e = sseEvent('message', { body: 'x'.repeat(1000) }, 'MSG-2');
    const first = sseFrame(e);
    e.data = 'changed after framing';
    expect(sseFrame(e)).toBe(first);
  });
});
