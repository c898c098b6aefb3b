// Default constructors of the storage seams that have no dependencies (a leaf file, so readers
// such as reconcile.ts and StorageIndex can fall back to them without an import cycle).
import { ChangeFeed } from './change-feed';
import { LivenessProbe } from './liveness';

export function createLivenessProbe(): LivenessProbe {
  return new LivenessProbe();
}

export function createChangeFeed(): ChangeFeed {
  return new ChangeFeed();
}
