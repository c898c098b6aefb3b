/**
 * Start-up trimming shared by the server and the CLI (docs/decisions.md, "Start-up: what NestJS
 * loads"). Plain Node only: it runs before NestJS is loaded and must not import it.
 *
 * A module is "deferred" by putting a stand-in into the require cache under the real module's
 * file name; the stand-in loads the real module on the first property read, so behaviour is
 * unchanged when the module is used and nothing is paid when it is not.
 */
import { readdirSync } from 'node:fs';
import * as path from 'node:path';

/** Registers `exports` as the loaded module of `file` (absolute, as Node resolves it). */
export function cacheAs(file: string, exports: unknown): void {
  const entry = { id: file, filename: file, loaded: true, exports, children: [], paths: [] };
  (require.cache as Record<string, unknown>)[file] = entry;
}

/** Resolves `request` the way `fromPackage` would see it, or undefined when it is not installed. */
export function resolveFrom(fromPackage: string, request: string): string | undefined {
  try {
    return require.resolve(request, { paths: [path.dirname(require.resolve(fromPackage))] });
  } catch {
    return undefined;
  }
}

/**
 * Defers `file`. `esModule`: the module is compiled ESM (it sets `__esModule`), so the stand-in can
 * answer that flag — what `__importDefault` asks at require time — without loading.
 */
export function deferModule(file: string, esModule: boolean): void {
  if (require.cache[file]) return;
  let real: Record<string | symbol, unknown> | undefined;
  const load = (): Record<string | symbol, unknown> => {
    if (!real) {
      delete require.cache[file];
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      real = require(file) as Record<string | symbol, unknown>;
      cacheAs(file, real);
    }
    return real;
  };
  const standIn = new Proxy(
    {},
    {
      get: (_t, key) => (esModule && key === '__esModule' && !real ? true : load()[key]),
      has: (_t, key) => key in load(),
      ownKeys: () => Reflect.ownKeys(load()),
      getOwnPropertyDescriptor: (_t, key) => {
        const d = Object.getOwnPropertyDescriptor(load(), key);
        return d ? { ...d, configurable: true } : undefined;
      },
    },
  );
  cacheAs(file, standIn);
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
  let rxjs: { operators?: unknown };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    rxjs = require(path.join(path.dirname(index), '..', 'bundles', 'rxjs.umd.min.js')) as { operators?: unknown };
  } catch {
    return; // a layout without the bundle: the ordinary CommonJS build loads as usual
  }
  if (!rxjs.operators) return;
  cacheAs(index, rxjs);
  cacheAs(operators, rxjs.operators);
}

/**
 * class-validator requires every string validator of `validator` (~110 files) and the phone-number
 * metadata of libphonenumber-js (~390 KB) when it loads; our DTOs use a handful of decorators.
 * Defer them: a validator used by a DTO loads on its first call.
 */
export function deferValidatorInternals(): void {
  const phone = resolveFrom('class-validator', 'libphonenumber-js/max');
  if (phone) deferModule(phone, false);
  const validatorPkg = resolveFrom('class-validator', 'validator/package.json');
  if (!validatorPkg) return;
  const lib = path.join(path.dirname(validatorPkg), 'lib');
  let files: string[];
  try {
    files = readdirSync(lib).filter((f) => f.endsWith('.js'));
  } catch {
    return;
  }
  for (const f of files) deferModule(path.join(lib, f), true);
  deferModule(path.join(path.dirname(validatorPkg), 'index.js'), true);
}

/**
 * What the server defers before NestJS loads: class-validator's internals and prom-client's
 * OpenTelemetry API (~50 modules, read only for exemplars, which the server does not enable).
 * The tsc build's server; the API bundle makes the same modules lazy when it is built
 * (scripts/bundle-api.js, LAZY).
 */
export function deferServerPackages(): void {
  deferValidatorInternals();
  const otel = resolveFrom('prom-client', '@opentelemetry/api');
  if (otel) deferModule(otel, false);
}
