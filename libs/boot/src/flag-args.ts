/**
 * Flags defined once for both nest-commander (`@Option(spec)`) and the NestJS-free fast paths
 * (`node:util` parseArgs): the CLI's `bus post|read` (apps/cli/src/fast-path.ts) and the
 * launcher's `serve` (serve-flags.ts, required by bin/launch.js). Plain module: node:util only.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface FlagSpec {
  /** commander syntax, e.g. `--type <type>`; the long name is the parseArgs key. */
  flags: string;
  description: string;
  type: 'string' | 'boolean';
  multiple?: boolean;
  defaultValue?: string | boolean;
}

/** The long name of a flag spec (`--tail <n>` → `tail`, `-f, --follow` → `follow`). */
export function longName(spec: FlagSpec): string {
  return /^(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)/.exec(spec.flags)![1];
}

/** The one-letter alias of a flag spec (`-f, --follow` → `f`), if it has one. */
function shortName(spec: FlagSpec): string | undefined {
  return /^-([a-zA-Z]), /.exec(spec.flags)?.[1];
}

/** The option key of a flag spec as commander names it (`--max-body-bytes <n>` → `maxBodyBytes`). */
export function optionKey(spec: FlagSpec): string {
  return longName(spec).replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function parseArgsOptions(specs: Record<string, FlagSpec>): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const spec of Object.values(specs)) {
    const short = shortName(spec);
    options[longName(spec)] = { type: spec.type, ...(spec.multiple ? { multiple: true } : {}), ...(short ? { short } : {}) };
  }
  return options;
}

/**
 * `--body -x` → `--body=-x`: a value-taking flag takes the next argument as given, even when it
 * starts with a dash (parseArgs would call it ambiguous; commander takes it, so both paths agree).
 */
export function attachFlagValues(args: string[], specs: Record<string, FlagSpec>): string[] {
  const takesValue = new Set(Object.values(specs).filter((s) => s.type === 'string').map((s) => `--${longName(s)}`));
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (takesValue.has(args[i]) && i + 1 < args.length) out.push(`${args[i]}=${args[++i]}`);
    else out.push(args[i]);
  }
  return out;
}

/** The options (keyed like commander's), or undefined for a usage error: commander (Nest path) then reports it in its words. */
export function parseFlagArgs(specs: Record<string, FlagSpec>, rawArgs: string[]): Record<string, unknown> | undefined {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: attachFlagValues(rawArgs, specs), options: parseArgsOptions(specs), strict: true, allowPositionals: false }));
  } catch {
    return undefined;
  }
  const options: Record<string, unknown> = {};
  for (const spec of Object.values(specs)) if (spec.defaultValue !== undefined) options[optionKey(spec)] = spec.defaultValue;
  for (const spec of Object.values(specs)) if (values[longName(spec)] !== undefined) options[optionKey(spec)] = values[longName(spec)];
  return options;
}
