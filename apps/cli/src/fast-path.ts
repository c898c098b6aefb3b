/**
 * Hot commands answered without NestJS (its boot costs ~150 ms): `--version` and `run-agent bus
 * post`, which agents call for every message. Flags come from the same definitions as the
 * nest-commander classes (commands/bus/bus-flags.ts); `--help` always goes to the Nest path.
 * Only plain (Nest-free) files may be imported here, directly or lazily.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { reportError, UsageError } from './common/cli-errors';
import { BUS_POST_FLAGS, longName, optionKey, type BusPostOptions, type FlagSpec } from './commands/bus/bus-flags';
import { versionText } from './version';

type ProgramName = 'run-agent' | 'conductor';

function parseArgsOptions(specs: Record<string, FlagSpec>): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const spec of Object.values(specs)) {
    options[longName(spec)] = spec.multiple ? { type: spec.type, multiple: true } : { type: spec.type };
  }
  return options;
}

function defaults(specs: Record<string, FlagSpec>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of Object.values(specs)) if (spec.defaultValue !== undefined) out[optionKey(spec)] = spec.defaultValue;
  return out;
}

/** parseArgs errors carry long hints; keep one line in commander's wording. */
function usageErrorFrom(err: unknown): UsageError {
  const e = err as { code?: string; message?: string };
  const message = String(e.message ?? err);
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return new UsageError(`unknown option '${unknown[1]}'`);
  const missing = /Option '([^']+)' argument missing/.exec(message);
  if (missing) return new UsageError(`option '${missing[1]}' argument missing`);
  const positional = /Unexpected argument '([^']+)'/.exec(message);
  if (positional) return new UsageError(`unexpected argument '${positional[1]}'`);
  return new UsageError(message.split('\n')[0]);
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

export function parseBusPostArgs(rawArgs: string[]): BusPostOptions {
  const args = attachFlagValues(rawArgs, BUS_POST_FLAGS);
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args, options: parseArgsOptions(BUS_POST_FLAGS), strict: true, allowPositionals: false }));
  } catch (err) {
    throw usageErrorFrom(err);
  }
  const options = defaults(BUS_POST_FLAGS);
  for (const spec of Object.values(BUS_POST_FLAGS)) if (values[longName(spec)] !== undefined) options[optionKey(spec)] = values[longName(spec)];
  return options as BusPostOptions;
}

const wantsHelp = (args: string[]) => args.some((a) => a === '--help' || a === '-h' || a === 'help');

/** Runs a hot command and returns true, or returns false to let NestJS handle `argv`. */
export async function runFastPath(argv: string[], programName: ProgramName): Promise<boolean> {
  const isVersion = (a: string) => a === '--version' || a === '-v';
  if (argv.some(isVersion) && argv.every((a) => isVersion(a) || a === '--json')) {
    process.stdout.write(versionText(programName, argv.includes('--json')));
    return true;
  }
  // `conductor bus …` is the API client (D16); only run-agent's bus post is local.
  if (programName !== 'run-agent' || argv[0] !== 'bus' || argv[1] !== 'post') return false;
  if (wantsHelp(attachFlagValues(argv.slice(2), BUS_POST_FLAGS))) return false;
  try {
    const options = parseBusPostArgs(argv.slice(2));
    // waking a task starts a Ralph loop: the Nest path handles it
    if (options.resume) return false;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runBusPost, readStdinIfPiped } = require('./commands/bus/bus-post') as typeof import('./commands/bus/bus-post');
    await runBusPost(options, { env: process.env, cwd: process.cwd(), stdout: process.stdout, readStdin: readStdinIfPiped });
  } catch (err) {
    reportError(err);
  }
  return true;
}
