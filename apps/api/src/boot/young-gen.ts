// Imported for its effect before the server's modules load (lean-server.ts, and the API bundle's
// boot shim scripts/api-bundle/lean-server.js).
import { setFlagsFromString } from 'node:v8';

// Loading ~1,200 modules makes V8 grow the young generation to its maximum (16 MB physical) and
// an idle server keeps it. Boot with the young generation at its initial size; leanBootDone()
// restores V8's default growth (2) once the server is ready, so load still grows it
// (docs/decisions.md, "Server start-up").
const V8_DEFAULT_SEMI_SPACE_GROWTH = 2;
let booting = false;
if (process.versions.v8.startsWith('11.') || process.versions.v8.startsWith('12.')) {
  setFlagsFromString('--semi-space-growth-factor=1');
  booting = true;
}

export function leanBootDone(): void {
  if (!booting) return;
  booting = false;
  setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_SEMI_SPACE_GROWTH}`);
}
