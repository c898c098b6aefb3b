import { FSWatcher, statfsSync, statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/** statfs magic numbers of filesystems where inotify does not see other hosts' writes. */
const NETWORK_FS_MAGIC = new Set([0x6969 /* NFS */, 0x00c36400 /* CephFS */, 0x65735546 /* FUSE */, 0xfe534d42 /* SMB2 */]);

export const DEFAULT_POLL_MS = 500;

/** True when `path` (or its nearest existing ancestor) lives on a network/FUSE filesystem. */
export function isNetworkFilesystem(path: string): boolean {
  let p = path;
  for (;;) {
    try {
      return NETWORK_FS_MAGIC.has(Number(statfsSync(p).type));
    } catch {
      const parent = dirname(p);
      if (parent === p) return false;
      p = parent;
    }
  }
}

function fingerprint(path: string): string {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return 'missing';
  }
}

interface DirWatch {
  watcher: FSWatcher;
  /** file name → callbacks */
  listeners: Map<string, Set<() => void>>;
}

export interface WatchOptions {
  /** Polling interval of the fallback check (default 500 ms). */
  pollMs?: number;
  /** Skip file-change notifications and poll only (network filesystems do this automatically). */
  pollOnly?: boolean;
}

/**
 * The one source of file-change wake-ups (the only fs.watch user). `watch(path, cb)` calls `cb`
 * when the file may have changed: on a notification for its name in its directory (one shared
 * watcher per directory), and from a polling check of size/mtime/inode that catches what
 * notifications miss (a directory created later, network filesystems, dropped events).
 * Callbacks may fire spuriously; consumers re-read from their own offsets.
 */
export class ChangeFeed {
  private readonly dirWatches = new Map<string, DirWatch>();
  private warnedNetworkFs = false;

  watch(path: string, onChange: () => void, opts: WatchOptions = {}): () => void {
    const pollMs = Math.max(10, opts.pollMs ?? DEFAULT_POLL_MS);
    let active = true;
    let pending = false;
    const fire = () => {
      if (!active || pending) return;
      pending = true;
      setImmediate(() => {
        pending = false;
        if (active) onChange();
      });
    };

    const network = !opts.pollOnly && isNetworkFilesystem(dirname(path));
    if (network && !this.warnedNetworkFs) {
      this.warnedNetworkFs = true;
      process.emitWarning(`network filesystem detected at ${dirname(path)}: using polling for change notifications`, 'ChangeFeedWarning');
    }
    const notify = !opts.pollOnly && !network;
    let unsubscribeDir = notify ? this.subscribeDir(dirname(path), basename(path), fire) : undefined;

    let last = fingerprint(path);
    const timer = setInterval(() => {
      const now = fingerprint(path);
      if (now !== last) {
        last = now;
        // the directory was missing when the watch began (a task folder not created yet): watch it now
        if (notify && !unsubscribeDir) unsubscribeDir = this.subscribeDir(dirname(path), basename(path), fire);
        fire();
      }
    }, pollMs);

    return () => {
      if (!active) return;
      active = false;
      clearInterval(timer);
      unsubscribeDir?.();
    };
  }

  /** Number of open directory watchers (for leak checks). */
  get openWatchers(): number {
    return this.dirWatches.size;
  }

  private subscribeDir(dir: string, name: string, cb: () => void): (() => void) | undefined {
    let entry = this.dirWatches.get(dir);
    if (!entry) {
      let watcher: FSWatcher;
      try {
        watcher = watch(dir, { persistent: false });
      } catch {
        return undefined; // directory missing or not watchable: polling covers it
      }
      const created: DirWatch = { watcher, listeners: new Map() };
      watcher.on('change', (_event, filename) => {
        const fileName = filename === null ? undefined : String(filename);
        for (const [n, set] of created.listeners) {
          if (fileName === undefined || fileName === n) set.forEach((fn) => fn());
        }
      });
      watcher.on('error', () => this.closeDir(dir));
      this.dirWatches.set(dir, created);
      entry = created;
    }
    const set = entry.listeners.get(name) ?? new Set();
    set.add(cb);
    entry.listeners.set(name, set);
    const owner = entry;
    return () => {
      set.delete(cb);
      if (set.size === 0) owner.listeners.delete(name);
      if (owner.listeners.size === 0 && this.dirWatches.get(dir) === owner) this.closeDir(dir);
    };
  }

  private closeDir(dir: string): void {
    const entry = this.dirWatches.get(dir);
    if (!entry) return;
    this.dirWatches.delete(dir);
    entry.watcher.close();
  }
}
