import { type OwnerFence, type RunInfo, updateRunInfo, writeRunInfo } from '@app/storage';

/** The `queued_reason` of a run's record while it waits for admission (issue #33). */
export interface QueuedMark {
  set(reason: string): Promise<void>;
  /** Clears the reason if one is set (the run goes on to start its agent). */
  clear(): Promise<void>;
  /** The run's record exists because it was marked (a root run that waited). */
  readonly recorded: boolean;
}

/**
 * Marks a run as queued, with the reason, in its run-info: readers (status, API, dashboard) show
 * it `queued` (runState). A child's record exists while it waits; a root run has none until its
 * agent starts, so `record` is written (with the reason) when it first has to wait.
 * `alreadySet`: the record was written queued.
 */
export function queuedMark(infoPath: string, opts: { alreadySet?: boolean; fence?: OwnerFence; record?: RunInfo }): QueuedMark {
  let set = !!opts.alreadySet;
  let recorded = false;
  const update = (reason: string | undefined) => updateRunInfo(infoPath, (i) => ({ ...i, queued_reason: reason }), { fence: opts.fence });
  return {
    async set(reason) {
      if (opts.record && !recorded) {
        writeRunInfo(infoPath, { ...opts.record, queued_reason: reason }, { fence: opts.fence });
        recorded = true;
      } else await update(reason);
      set = true;
    },
    async clear() {
      if (!set) return;
      await update(undefined);
      set = false;
    },
    get recorded() {
      return recorded;
    },
  };
}
