import { createLivenessProbe } from '@app/storage';

/**
 * The parts a spec hands the engine's plain loop (`runTask` of @app/runner), as a composition root
 * does: the loop has no default of its own (issue #32).
 */
export const loopProbe = createLivenessProbe();
