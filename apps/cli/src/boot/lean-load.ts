/**
 * Start-up trimming of the Nest path (docs/decisions.md, "CLI start-up"). Plain Node only: this
 * file runs before NestJS is loaded and must not import it.
 *
 * - nest-commander's CommandRunnerModule requires `inquirer` eagerly (with lodash, rxjs and ~250
 *   modules) although no command of ours prompts. We register a stand-in whose properties load the
 *   real package on first use, so prompting still works if a command ever asks.
 * (V8's compile cache is switched on earlier, in bin/launch.js.)
 */
import * as path from 'node:path';

const INQUIRER_KEYS = ['prompts', 'Separator', 'ui', 'createPromptModule', 'prompt', 'registerPrompt', 'restoreDefaultPrompts'];

interface CacheEntry {
  id: string;
  filename: string;
  loaded: boolean;
  exports: unknown;
  children: unknown[];
  paths: string[];
}

/** Resolves `request` the way `fromPackage` would see it, or undefined when it is not installed. */
function resolveFrom(fromPackage: string, request: string): string | undefined {
  try {
    const from = require.resolve(fromPackage);
    return require.resolve(request, { paths: [path.dirname(from)] });
  } catch {
    return undefined;
  }
}

/** Puts a lazy stand-in for inquirer into the require cache (only where nest-commander finds it). */
export function deferInquirer(): void {
  const file = resolveFrom('nest-commander', 'inquirer');
  if (!file || require.cache[file]) return;
  let real: Record<string, unknown> | undefined;
  const load = (): Record<string, unknown> => {
    if (!real) {
      delete require.cache[file];
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      real = require(file) as Record<string, unknown>;
    }
    return real;
  };
  const standIn: Record<string, unknown> = {};
  for (const key of INQUIRER_KEYS) Object.defineProperty(standIn, key, { enumerable: true, get: () => load()[key] });
  cacheAs(file, standIn);
}

function cacheAs(file: string, exports: unknown): void {
  const entry: CacheEntry = { id: file, filename: file, loaded: true, exports, children: [], paths: [] };
  (require.cache as Record<string, unknown>)[file] = entry;
}

/**
 * rxjs's CommonJS build is ~226 files that NestJS requires at start-up; its own published UMD
 * bundle has the same exports in one file. Serve `rxjs` and `rxjs/operators` (as NestJS resolves
 * them) from that bundle, so every user in this process shares one copy.
 */
export function bundleRxjs(): void {
  const index = resolveFrom('@nestjs/common', 'rxjs');
  const operators = resolveFrom('@nestjs/common', 'rxjs/operators');
  if (!index || !operators || require.cache[index] || require.cache[operators]) return;
  const bundle = path.join(path.dirname(index), '..', 'bundles', 'rxjs.umd.min.js');
  let rxjs: { operators?: unknown };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    rxjs = require(bundle) as { operators?: unknown };
  } catch {
    return; // a layout without the bundle: the ordinary CommonJS build loads as usual
  }
  if (!rxjs.operators) return;
  cacheAs(index, rxjs);
  cacheAs(operators, rxjs.operators);
}
