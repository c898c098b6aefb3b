/**
 * Hot commands answered without NestJS's container (its start-up alone costs ~3× `node -e 0`, see
 * docs/decisions/startup-and-memory.md): `--version`, `run-agent bus post` / `bus read`, which
 * agents call for every message, and the commands of fast/hot-commands.ts (`status`, `list`,
 * `output`, `stop`, `task`, `job`) on the plain composition root (fast/plain-root.ts). Flags come
 * from the same definitions as the nest-commander classes (`*-flags.ts`) and the bodies are the same
 * functions those classes call; `--help`, usage errors, subcommands, `bus post --resume`,
 * `bus read --follow` and `output --follow` go to the Nest path. A bare `conductor` (no arguments)
 * starts the server through the same function `serve` runs.
 * What this file loads at once is plain (Nest-free): the flag files import types only. The hot
 * bodies, loaded when named, use the lib barrels; the bundle makes those lazy, so no hot command
 * evaluates a NestJS module (the runner, agent registry and webhook service are plain classes).
 */
import { attachFlagValues, fdStdout, parseFlagArgs } from '@app/boot';
import { reportError, setJsonErrors } from './common/cli-errors';
import { BUS_POST_FLAGS, BUS_READ_FLAGS, type BusPostOptions, type BusReadOptions, type FlagSpec } from './commands/bus/bus-flags';
import { versionText } from './version';
import { HOT_COMMANDS } from './fast/hot-commands';
import { runHotCommand } from './fast/run-hot';

type ProgramName = 'run-agent' | 'conductor';

export function parseBusPostArgs(args: string[]): BusPostOptions | undefined {
  return parseFlagArgs(BUS_POST_FLAGS, args) as BusPostOptions | undefined;
}

export function parseBusReadArgs(args: string[]): BusReadOptions | undefined {
  return parseFlagArgs(BUS_READ_FLAGS, args) as BusReadOptions | undefined;
}

/** `bus post` (without --resume, which starts a Ralph loop). False: let NestJS run it. */
async function busPost(args: string[]): Promise<boolean> {
  const options = parseBusPostArgs(args);
  if (!options || options.resume) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { runBusPost, readStdinIfPiped } = require('./commands/bus/bus-post') as typeof import('./commands/bus/bus-post');
  await runBusPost(options, { env: process.env, cwd: process.cwd(), stdout: fdStdout(), readStdin: readStdinIfPiped });
  return true;
}

/** `bus read` (without --follow, which waits for signals on the Nest path). */
async function busRead(args: string[]): Promise<boolean> {
  const options = parseBusReadArgs(args);
  if (!options || options.follow) return false;
  setJsonErrors(options.json === true);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { runBusRead } = require('./commands/bus/bus-read') as typeof import('./commands/bus/bus-read');
  await runBusRead(options, { env: process.env, cwd: process.cwd(), stdout: fdStdout() });
  return true;
}

const BUS_FAST_COMMANDS: Record<string, { specs: Record<string, FlagSpec>; run: (args: string[]) => Promise<boolean> }> = {
  post: { specs: BUS_POST_FLAGS, run: busPost },
  read: { specs: BUS_READ_FLAGS, run: busRead },
};

// after attachFlagValues, so `--body --help` is a body, not a request for help
const wantsHelp = (args: string[]) => args.some((a) => a === '--help' || a === '-h' || a === 'help');

/** Runs a hot command and returns true, or returns false to let NestJS handle `argv`. */
export async function runFastPath(argv: string[], programName: ProgramName): Promise<boolean> {
  const isVersion = (a: string) => a === '--version' || a === '-v';
  if (argv.some(isVersion) && argv.every((a) => isVersion(a) || a === '--json')) {
    fdStdout().write(versionText(programName, argv.includes('--json')));
    return true;
  }
  // A bare `conductor` (settings from CONDUCTOR_* and the config) starts the server without booting the
  // CLI's NestJS app. bin/launch.js sends it straight to the API bundle; this is the way when that is not current.
  if (programName === 'conductor' && argv.length === 0) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { loadApiServer } = require('./commands/server/serve/api-loader') as typeof import('./commands/server/serve/api-loader');
    try {
      await loadApiServer().serveMain(programName);
    } catch (err) {
      reportError(err);
    }
    return true;
  }
  // `status`, `list`, …: the plain composition root (fast/); `conductor status` is the API client
  if (programName === 'run-agent' && argv[0] !== undefined && Object.hasOwn(HOT_COMMANDS, argv[0])) return runHotCommand(argv);
  // `conductor bus …` is the API client (D16); only run-agent's bus post is local.
  const fast = argv[0] === 'bus' && argv[1] !== undefined && Object.hasOwn(BUS_FAST_COMMANDS, argv[1]) ? BUS_FAST_COMMANDS[argv[1]] : undefined;
  if (programName !== 'run-agent' || !fast || wantsHelp(attachFlagValues(argv.slice(2), fast.specs))) return false;
  try {
    return await fast.run(argv.slice(2));
  } catch (err) {
    reportError(err);
  }
  return true;
}

