import { createBusWriters } from '@app/messagebus';
import { createLivenessProbe } from '@app/storage';

/**
 * The parts a spec hands the engine's plain functions (`runTask`, `runJob` of @app/runner) and
 * RunnerService, as a composition root does: the engine has no defaults of its own (issue #32).
 */
export const loopParts = { probe: createLivenessProbe(), writers: createBusWriters() };
