import { createBusWriters } from '@app/messagebus';
import { createLivenessProbe } from '@app/storage';

/**
 * The parts a spec hands the engine's plain loop (`runTask` of @app/runner) and RunnerService, as a
 * composition root does: the loop has no defaults of its own (issue #32).
 */
export const loopParts = { probe: createLivenessProbe(), writers: createBusWriters() };
