import type { ChangeFeed } from '@app/storage';

/** Resolves on the first change under one of `paths`, or after `maxMs`. */
export function waitForChange(feed: ChangeFeed, paths: string[], maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    const stops: Array<() => void> = [];
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stops.forEach((stop) => stop());
      resolve();
    };
    const timer = setTimeout(finish, Math.max(0, maxMs));
    for (const path of paths) {
      try {
        stops.push(feed.watch(path, finish));
      } catch {
        // not watchable (e.g. missing): the timer covers it
      }
    }
  });
}
