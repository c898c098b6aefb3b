import { type OwnerFence, updateRunInfo } from '@app/storage';

/** The `queued_reason` of a child run's record while it waits for admission (issue #33). */
export interface QueuedMark {
  set(reason: string): Promise<void>;
  /** Clears the reason if one is set (the run goes on to start its agent). */
  clear(): Promise<void>;
}

/**
 * Marks a run as queued, with the reason, in its run-info: readers (status, API, dashboard) show
 * it `queued` (runState). Only runs with a record while they wait (child runs) are marked; a root
 * run waiting for a slot has its queue marker instead. `alreadySet`: the record was written queued.
 */
export function queuedMark(infoPath: string, opts: { enabled: boolean; alreadySet?: boolean; fence?: OwnerFence }): QueuedMark {
  let set = !!opts.alreadySet;
  const write = (reason: string | undefined) => updateRunInfo(infoPath, (i) => ({ ...i, queued_reason: reason }), { fence: opts.fence });
  return {
    async set(reason) {
      if (!opts.enabled) return;
      await write(reason);
      set = true;
    },
    async clear() {
      if (!set) return;
      await write(undefined);
      set = false;
    },
  };
}
