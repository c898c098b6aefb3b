// Imported for its effect before the server's modules load: first in the API bundle's entry
// (scripts/api-bundle/entry.js), and through lean-server.ts in the tsc build.
import * as nodeModule from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// V8 settings that cost an idle server memory it never uses again (docs/decisions.md, "Server
// idle memory"):
// - loading ~1,200 modules grows the young generation to its maximum (16 MB physical), which an
//   idle server keeps;
// - TurboFan and Sparkplug compile boot-only code: the compilers' code pages, their zone memory
//   and the compiled code stay resident (8 MB).
// Boot with the young generation at its initial size and the interpreter only; leanBootDone()
// restores V8's defaults once the server is ready, so load still grows the young generation and
// tiers hot code up. A flag the user set on the command line is left alone.
const BOOT = { 'semi-space-growth-factor': 1, turbofan: false, sparkplug: false } as const;
const DEFAULTS = { 'semi-space-growth-factor': 2, turbofan: true, sparkplug: true } as const;
type Flag = keyof typeof BOOT;

/** The V8 flags named in Node's own arguments (`--no-opt` names turbofan: V8's alias). */
const chosenByUser = new Set(
  process.execArgv.map((arg) => {
    const name = arg.replace(/^--(no-)?/, '').split('=')[0].replace(/_/g, '-');
    return name === 'opt' ? 'turbofan' : name;
  }),
);

const asArg = (flag: Flag, value: number | boolean): string =>
  typeof value === 'number' ? `--${flag}=${value}` : `--${value ? '' : 'no-'}${flag}`;

function set(values: Record<Flag, number | boolean>, flags: Flag[]): void {
  if (flags.length > 0) setFlagsFromString(flags.map((flag) => asArg(flag, values[flag])).join(' '));
}

/** The V8 versions whose flag names and defaults these are (Node 20 and 22). */
const KNOWN_V8 = /^1[12]\./.test(process.versions.v8);
const managed: Flag[] = KNOWN_V8 ? (Object.keys(BOOT) as Flag[]).filter((flag) => !chosenByUser.has(flag)) : [];
let booting = managed.length > 0;
set(BOOT, managed);

export function leanBootDone(): void {
  if (!booting) return;
  booting = false;
  set(DEFAULTS, managed);
}

/**
 * Once the server is ready: one full GC that compacts the heap and drops the bytecode of the
 * functions only the boot ran (they compile again from source if ever called), returning ~3 MB of
 * boot leftovers to the OS now rather than when V8's memory reducer runs, ~8 s after start; ~20 ms
 * of the main thread. Node's compile cache is written first, while it still holds that bytecode.
 * gc() is exposed for this one call, the way jest's leak detector exposes it.
 */
export function releaseBootMemory(): void {
  if (!KNOWN_V8) return;
  try {
    (nodeModule as { flushCompileCache?: () => void }).flushCompileCache?.();
  } catch {
    // an optimisation only: an unwritable cache folder must not stop the server
  }
  const flags = ['expose-gc', 'compact-on-every-full-gc', 'stress-flush-code'].filter((flag) => !chosenByUser.has(flag));
  setFlagsFromString(flags.map((flag) => `--${flag}`).join(' '));
  try {
    (runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined)?.();
  } finally {
    setFlagsFromString(flags.map((flag) => `--no-${flag}`).join(' '));
  }
}
