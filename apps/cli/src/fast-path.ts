/**
 * Hot commands answered without NestJS (its start-up alone costs ~3× `node -e 0`, see
 * docs/decisions.md "CLI start-up"): `--version`, and `run-agent bus post` / `bus read`, which
 * agents call for every message. Flags come from the same definitions as the nest-commander
 * classes (commands/bus/bus-flags.ts) and the bodies are the same functions those classes call;
 * `--help`, usage errors, `bus post --resume` and `bus read --follow` go to the Nest path.
 * Only plain (Nest-free) files may be imported here, directly or lazily.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { reportError } from './common/cli-errors';
import { BUS_POST_FLAGS, BUS_READ_FLAGS, longName, type BusPostOptions, type BusReadOptions, type FlagSpec } from './commands/bus/bus-flags';
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
  for (const spec of Object.values(specs)) if (spec.defaultValue !== undefined) out[longName(spec)] = spec.defaultValue;
  return out;
}

/** The options, or undefined for a usage error: commander (Nest path) then reports it in its words. */
function parseFlags(specs: Record<string, FlagSpec>, args: string[]): Record<string, unknown> | undefined {
  try {
    const { values } = parseArgs({ args, options: parseArgsOptions(specs), strict: true, allowPositionals: false });
    return { ...defaults(specs), ...values };
  } catch {
    return undefined;
  }
}

export function parseBusPostArgs(args: string[]): BusPostOptions | undefined {
  return parseFlags(BUS_POST_FLAGS, args) as BusPostOptions | undefined;
}

export function parseBusReadArgs(args: string[]): BusReadOptions | undefined {
  return parseFlags(BUS_READ_FLAGS, args) as BusReadOptions | undefined;
}

/** `bus post` (without --resume, which starts a Ralph loop). False: let NestJS run it. */
async function busPost(args: string[]): Promise<boolean> {
  const options = parseBusPostArgs(args);
  if (!options || options.resume) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { runBusPost, readStdinIfPiped } = require('./commands/bus/bus-post') as typeof import('./commands/bus/bus-post');
  await runBusPost(options, { env: process.env, cwd: process.cwd(), stdout: process.stdout, readStdin: readStdinIfPiped });
  return true;
}

/** `bus read` (without --follow, which waits for signals on the Nest path). */
async function busRead(args: string[]): Promise<boolean> {
  const options = parseBusReadArgs(args);
  if (!options || options.follow) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { runBusRead } = require('./commands/bus/bus-read') as typeof import('./commands/bus/bus-read');
  await runBusRead(options, { env: process.env, cwd: process.cwd(), stdout: process.stdout });
  return true;
}

const BUS_FAST_COMMANDS: Record<string, (args: string[]) => Promise<boolean>> = { post: busPost, read: busRead };

const wantsHelp = (args: string[]) => args.some((a) => a === '--help' || a === '-h' || a === 'help');

/** Runs a hot command and returns true, or returns false to let NestJS handle `argv`. */
export async function runFastPath(argv: string[], programName: ProgramName): Promise<boolean> {
  const isVersion = (a: string) => a === '--version' || a === '-v';
  if (argv.some(isVersion) && argv.every((a) => isVersion(a) || a === '--json')) {
    process.stdout.write(versionText(programName, argv.includes('--json')));
    return true;
  }
  // `conductor bus …` is the API client (D16); only run-agent's bus post is local.
  const fast = argv[0] === 'bus' && argv[1] !== undefined && Object.hasOwn(BUS_FAST_COMMANDS, argv[1]) ? BUS_FAST_COMMANDS[argv[1]] : undefined;
  if (programName !== 'run-agent' || !fast || wantsHelp(argv.slice(2))) return false;
  try {
    return await fast(argv.slice(2));
  } catch (err) {
    reportError(err);
  }
  return true;
}
