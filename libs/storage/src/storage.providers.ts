// The one place the storage seams are constructed (test/arch forbids `new` of them elsewhere).
// StorageModule provides them to both apps; Nest-free callers (plain library functions, the CLI
// fast path) fall back to these factories when no instance is passed in.
import type { LivenessProbe } from './liveness';
import { createLivenessProbe, createRunsLayout } from './seams.providers';
import { StorageIndex } from './storage-index';

export { createChangeFeed, createLivenessProbe, createRunsLayout } from './seams.providers';

/** Injection tokens of the storage seams (override them in a Nest testing module). */
export const STORAGE_OPTIONS = Symbol('STORAGE_OPTIONS');
export const LIVENESS_PROBE = Symbol('LIVENESS_PROBE');
export const CHANGE_FEED = Symbol('CHANGE_FEED');
/** The StorageIndex of the root given to StorageModule.forRoot (the server's runs root). */
export const STORAGE_INDEX = Symbol('STORAGE_INDEX');
/** Builds the StorageIndex of a runs root chosen later (the CLI resolves --root per command). */
export const STORAGE_INDEX_FACTORY = Symbol('STORAGE_INDEX_FACTORY');

export interface StorageModuleOptions {
  /** Runs root of STORAGE_INDEX; without it only STORAGE_INDEX_FACTORY is provided. */
  root?: string;
  /**
   * Liveness probe of STORAGE_INDEX only, when it differs from LIVENESS_PROBE: a scale-out
   * replica root (`conductor --nats`) holds runs whose processes live on worker hosts.
   */
  indexProbe?: LivenessProbe;
}

export type StorageIndexFactory = (root: string) => StorageIndex;

export function createStorageIndex(root: string, probe: LivenessProbe = createLivenessProbe()): StorageIndex {
  return new StorageIndex(createRunsLayout(root), probe);
}

/** Index factory bound to one probe: the indexes it builds share the injected liveness probe. */
export function storageIndexFactory(probe: LivenessProbe): StorageIndexFactory {
  return (root) => createStorageIndex(root, probe);
}
