// Imported for its effect, first in server.ts: before NestJS and class-validator load (lean-load.ts).
// The API bundle replaces this file with scripts/api-bundle/lean-server.js (scripts/bundle-api.js).
import { bundleRxjs, deferServerPackages } from '@app/boot/lean-load';

bundleRxjs();
deferServerPackages();
