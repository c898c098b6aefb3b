import { createBusWriters } from '@app/messagebus';
import { createLivenessProbe, storageIndexFactory } from '@app/storage';

/**
 * The parts a spec hands the engine's plain functions (`runTask`, `runJob` of @app/runner) and
 * RunnerService, as a composition root does: the engine has no defaults of its own (issue #32).
 */
const probe = createLivenessProbe();
export const loopParts = { probe, writers: createBusWriters(), indexFor: storageIndexFactory(probe) };
