import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChangeFeed, isNetworkFilesystem } from '@app/storage';
import { makeTempDir } from './helpers/temp';

/** Resolves on the next call of the returned callback. */
function nextCall(): { cb: () => void; called: () => Promise<void>; count: () => number } {
  let n = 0;
  let waiters: (() => void)[] = [];
  return {
    cb: () => {
      n++;
      const w = waiters;
      waiters = [];
      w.forEach((fn) => fn());
    },
    called: () => new Promise<void>((resolve) => waiters.push(resolve)),
    count: () => n,
  };
}

describe('ChangeFeed', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let feed: ChangeFeed;
  beforeEach(() => {
    tmp = makeTempDir();
    feed = new ChangeFeed();
  });
  afterEach(() => tmp.cleanup());

  it('starts file notifications once a folder missing at the start of the watch appears (polling finds it first)', async () => {
    const dir = join(tmp.dir, 'task-not-yet');
    const path = join(dir, 'bus.md');
    const call = nextCall();
    const stop = feed.watch(path, call.cb, { pollMs: 20 });
    expect(feed.openWatchers).toBe(0);
    const appeared = call.called();
    mkdirSync(dir);
    writeFileSync(path, 'a\n');
    await appeared;
    // the folder is watched now: later appends wake through notifications, not only the poll
    expect(feed.openWatchers).toBe(1);
    stop();
    expect(feed.openWatchers).toBe(0);
  });

  it('wakes a watcher when its file is appended (file notifications; polling set far away)', async () => {
    const path = join(tmp.dir, 'bus.md');
    writeFileSync(path, 'a\n');
    const call = nextCall();
    const stop = feed.watch(path, call.cb, { pollMs: 600_000 });
    expect(feed.openWatchers).toBe(1);
    const woke = call.called();
    appendFileSync(path, 'b\n');
    await woke;
    stop();
    expect(feed.openWatchers).toBe(0);
  });

  it('ignores changes to other files of the same folder', async () => {
    const path = join(tmp.dir, 'watched.md');
    const other = join(tmp.dir, 'other.md');
    writeFileSync(path, '');
    const watched = nextCall();
    const sentinel = nextCall();
    const stopWatched = feed.watch(path, watched.cb, { pollMs: 600_000 });
    const stopSentinel = feed.watch(other, sentinel.cb, { pollMs: 600_000 });
    expect(feed.openWatchers).toBe(1); // one shared watcher for the folder
    const sawOther = sentinel.called();
    writeFileSync(other, 'x');
    await sawOther;
    expect(watched.count()).toBe(0);
    stopWatched();
    expect(feed.openWatchers).toBe(1);
    stopSentinel();
    expect(feed.openWatchers).toBe(0);
  });

  it('falls back to polling: pollOnly watchers see changes without fs.watch', async () => {
    const path = join(tmp.dir, 'polled.md');
    writeFileSync(path, '');
    const call = nextCall();
    const stop = feed.watch(path, call.cb, { pollMs: 20, pollOnly: true });
    expect(feed.openWatchers).toBe(0);
    const woke = call.called();
    appendFileSync(path, 'x');
    await woke;
    stop();
  });

  it('notices a file whose folder does not exist yet', async () => {
    const dir = join(tmp.dir, 'later');
    const path = join(dir, 'TASK-MESSAGE-BUS.md');
    const call = nextCall();
    const stop = feed.watch(path, call.cb, { pollMs: 20 });
    const woke = call.called();
    mkdirSync(dir);
    writeFileSync(path, 'hello');
    await woke;
    stop();
    expect(feed.openWatchers).toBe(0);
  });

  it('stops calling after unsubscribe and tolerates a double unsubscribe', async () => {
    const path = join(tmp.dir, 'x.md');
    writeFileSync(path, '');
    const call = nextCall();
    const stop = feed.watch(path, call.cb, { pollMs: 20 });
    stop();
    stop();
    appendFileSync(path, 'more');
    // A second watcher on the same file proves the change was observable.
    const probe = nextCall();
    const stopProbe = feed.watch(path, probe.cb, { pollMs: 20 });
    const woke = probe.called();
    appendFileSync(path, 'again');
    await woke;
    stopProbe();
    expect(call.count()).toBe(0);
  });

  it('classifies a local temp folder as a local filesystem', () => {
    expect(isNetworkFilesystem(tmp.dir)).toBe(false);
    expect(isNetworkFilesystem(join(tmp.dir, 'no', 'such', 'dir'))).toBe(false);
  });
});
