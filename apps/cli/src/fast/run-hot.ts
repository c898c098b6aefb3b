import { attachFlagValues, parseFlagArgs } from '@app/boot';
import { reportError, setJsonErrors } from '../common/cli-errors';
import { HOT_COMMANDS, type HotCommand } from './hot-commands';
import type { PlainSeams } from './plain-root';

// after attachFlagValues, so `--status --help` is a value, not a request for help
const wantsHelp = (args: string[]) => args.some((a) => a === '--help' || a === '-h' || a === 'help');

/** `argv`'s hot command and its options, or undefined for `--help`, a usage error or a command the hot path leaves to nest-commander. */
export function parseHotCommand(argv: string[]): { hot: HotCommand; options: Record<string, unknown> } | undefined {
  const hot = Object.hasOwn(HOT_COMMANDS, argv[0]) ? HOT_COMMANDS[argv[0]] : undefined;
  const args = argv.slice(1);
  if (!hot || wantsHelp(attachFlagValues(args, hot.specs))) return undefined;
  const options = parseFlagArgs(hot.specs, args);
  if (!options || hot.nestWhen?.(options)) return undefined;
  return { hot, options };
}

/**
 * Runs `argv` (`status …`, `list …`) on a plain composition root (by default plainRoot()) and
 * returns true, or returns false for `--help` and usage errors: nest-commander words those.
 */
export async function runHotCommand(argv: string[], given?: PlainSeams): Promise<boolean> {
  const parsed = parseHotCommand(argv);
  if (!parsed) return false;
  const { hot, options } = parsed;
  setJsonErrors(options.json === true);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const root = given ? undefined : (require('./plain-root') as typeof import('./plain-root')).plainRoot();
  try {
    await hot.run(options, given ?? root!);
  } catch (err) {
    reportError(err);
  } finally {
    root?.close();
  }
  return true;
}
