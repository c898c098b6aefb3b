// Imported for its effect, first in server.ts: before NestJS and class-validator load (lean-load.ts).
import { bundleRxjs, deferValidatorInternals } from './lean-load';

bundleRxjs();
deferValidatorInternals();
