/**
 * The plain composition root of the hot commands (issue #32): the same seams the Nest container
 * gives the command classes (StorageModule's providers), built by the libs' own provider factories
 * without NestJS. Only this file and the lib modules construct them (test/arch).
 */
import { createLivenessProbe, storageIndexFactory, type LivenessProbe, type StorageIndexFactory } from '@app/storage';

/** The seams a hot command may take (StatusSeams, ListSeams, ... are subsets). */
export interface PlainSeams {
  probe: LivenessProbe;
  indexFor: StorageIndexFactory;
}

/**
 * One probe shared by the index factory, as StorageModule wires them. `parts` replaces a seam as
 * overrideProvider does in a Nest testing module (test/e2e/di runs both roots).
 */
export function plainRoot(parts: { probe?: LivenessProbe } = {}): PlainSeams {
  const probe = parts.probe ?? createLivenessProbe();
  return { probe, indexFor: storageIndexFactory(probe) };
}
