// Constructors of the storage seams that have no dependencies (a leaf file: the composition roots
// and the CLI's Nest-free fast path call them without loading the storage barrel).
import { ChangeFeed } from './change-feed';
import { RunsLayout } from './layout';
import { LivenessProbe } from './liveness';

/** The layout of a runs root: the one place it is constructed (test/arch/seams.spec.ts). */
export function createRunsLayout(root: string): RunsLayout {
  return new RunsLayout(root);
}

export function createLivenessProbe(): LivenessProbe {
  return new LivenessProbe();
}

export function createChangeFeed(): ChangeFeed {
  return new ChangeFeed();
}
