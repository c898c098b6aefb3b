// `run-agent watch` output (#13 item 6): only changes on a pipe, one block redrawn in place on a terminal.
import { PassThrough } from 'node:stream';
import { createWatchView, type WatchTaskStatus } from '../../../apps/cli/src/commands/engine/progress/watch-view';
import { screenOf } from '../../utils/terminal-screen';

const task = (task_id: string, status: string, elapsed = 5, done = false): WatchTaskStatus => ({ task_id, status, elapsed, done });

/** A real stream that collects what is written; `tty` makes it look like a terminal of 100 columns. */
function sink(tty: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  Object.assign(stream, tty ? { isTTY: true, columns: 100, rows: 30 } : {});
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

const line = (id: string, status: string, phase: string, time: string, label = 'elapsed') => `  ${id.padEnd(45)} [${status.padEnd(9)}] ${phase.padEnd(9)} ${label}: ${time}`;

describe('watch view on a pipe: the first poll whole, then only what changed', () => {
  it('prints nothing for polls without a status change and only the changed task with its transition', () => {
    const out = sink(false);
    const view = createWatchView(out.stream, { TERM: 'xterm' });
    view.update([task('t1', 'running'), task('t2', 'running')], false, 60_000);
    view.update([task('t1', 'running', 7), task('t2', 'running', 7)], false, 58_000);
    view.update([task('t1', 'running', 9), task('t2', 'running', 9)], false, 56_000);
    view.update([task('t1', 'completed', 10, true), task('t2', 'running', 10)], false, 55_000);
    view.update([task('t1', 'completed', 10, true), task('t2', 'failed', 12, true)], true, 53_000);
    view.finish();
    expect(out.text().split('\n')).toEqual([
      '  phase counts: active=2 blocked=0 completed=0 failed=0 stopped=0 pending=0',
      line('t1', 'running', 'active', '5s'),
      line('t2', 'running', 'active', '5s'),
      'Waiting for 2 active and 0 blocked task(s)... (timeout in 1m0s)',
      '  phase counts: active=1 blocked=0 completed=1 failed=0 stopped=0 pending=0',
      line('t1', 'completed', 'completed', '10s', 'duration'),
      '    transition: active -> completed',
      'Waiting for 1 active and 0 blocked task(s)... (timeout in 55s)',
      '  phase counts: active=0 blocked=0 completed=1 failed=1 stopped=0 pending=0',
      line('t2', 'failed', 'failed', '12s', 'duration'),
      '    transition: active -> failed',
      'All tasks complete.',
      '',
    ]);
  });

  it('TERM=dumb on a terminal also prints changes only', () => {
    const out = sink(true);
    const view = createWatchView(out.stream, { TERM: 'dumb' });
    view.update([task('t1', 'running')], false, 1000);
    view.update([task('t1', 'running', 6)], false, 1000);
    expect(out.text()).not.toContain('\u001b[');
    expect(out.text().match(/phase counts/g)).toHaveLength(1);
  });
});

describe('watch view on a terminal: one block redrawn in place', () => {
  it('keeps a single up-to-date block on screen, with each transition printed once above it', () => {
    const out = sink(true);
    const view = createWatchView(out.stream, { TERM: 'xterm', NO_COLOR: '1' });
    view.update([task('t1', 'running', 1), task('t2', 'running', 1)], false, 60_000);
    view.update([task('t1', 'running', 2), task('t2', 'running', 2)], false, 59_000);
    view.update([task('t1', 'completed', 3, true), task('t2', 'running', 3)], false, 58_000);
    view.update([task('t1', 'completed', 3, true), task('t2', 'running', 4)], false, 57_000);
    view.update([task('t1', 'completed', 3, true), task('t2', 'completed', 5, true)], true, 56_000);
    view.finish();
    expect(out.text()).toContain('\u001b[1A'); // redrawn over itself, not appended
    expect(out.text()).not.toContain('\u001b[3'); // NO_COLOR: no colour codes
    expect(screenOf(out.text())).toEqual([
      '  t1: active -> completed',
      '  t2: active -> completed',
      '  phase counts: active=0 blocked=0 completed=2 failed=0 stopped=0 pending=0',
      line('t1', 'completed', 'completed', '3s', 'duration'),
      line('t2', 'completed', 'completed', '5s', 'duration'),
      'All tasks complete.',
    ]);
  });

  it('colours phases unless NO_COLOR, and leaves the last block on screen when stopped early', () => {
    const out = sink(true);
    const view = createWatchView(out.stream, { TERM: 'xterm' });
    view.update([task('t1', 'running', 1)], false, 1000);
    view.update([task('t1', 'failed', 2, true)], false, 0);
    view.finish();
    view.finish();
    expect(out.text()).toContain('\u001b[31m'); // red: failed
    expect(screenOf(out.text())).toEqual([
      '  t1: active -> failed',
      '  phase counts: active=0 blocked=0 completed=0 failed=1 stopped=0 pending=0',
      line('t1', 'failed', 'failed', '2s', 'duration'),
      'Waiting for 0 active and 0 blocked task(s)... (timeout in 0s)',
    ]);
  });
});
