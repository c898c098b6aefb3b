import type { ChangeFeed } from '@app/storage/change-feed';
import { BusCursor } from './reader';
import type { BusMessage } from './types';

export interface FollowOptions {
  sinceId?: string;
  /** Start with the last N existing messages (≤0 or unset with no sinceId: all of them). */
  last?: number;
  /** Fallback polling interval (default 500 ms); change notifications usually wake us sooner. */
  pollMs?: number;
  /** The process's shared feed (MessageBusService passes the injected one; the composition root's). */
  feed: ChangeFeed;
  /** Read errors while following (the follow keeps going); default: ignored. */
  onError?: (err: unknown) => void;
}

/**
 * Calls `onMessages` with the existing messages selected by `opts`, then with each batch of new
 * ones, reading only new bytes. A rotated bus continues with the new file's messages (upstream
 * reprinted the whole file forever). Returns a function that stops following.
 * Throws BusError SINCE_NOT_FOUND at start when `sinceId` is absent.
 */
export function followBus(path: string, opts: FollowOptions, onMessages: (m: BusMessage[]) => void): () => void {
  const cursor = new BusCursor(path, { sinceId: opts.sinceId, last: opts.last });
  let stopped = false;
  const pump = () => {
    if (stopped) return;
    try {
      const msgs = cursor.readNew();
      if (msgs.length > 0) onMessages(msgs);
    } catch (err) {
      opts.onError?.(err);
    }
  };
  pump();
  const unwatch = opts.feed.watch(path, pump, { pollMs: opts.pollMs });
  return () => {
    if (stopped) return;
    stopped = true;
    unwatch();
    cursor.close();
  };
}
