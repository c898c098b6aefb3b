import { attachFlagValues, parseFlagArgs } from '@app/boot';
import { reportError, setJsonErrors } from '../common/cli-errors';
import { HOT_COMMANDS } from './hot-commands';
import type { PlainSeams } from './plain-root';

// after attachFlagValues, so `--status --help` is a value, not a request for help
const wantsHelp = (args: string[]) => args.some((a) => a === '--help' || a === '-h' || a === 'help');

/**
 * Runs `argv` (`status …`, `list …`) on a plain composition root (by default plainRoot()) and
 * returns true, or returns false for `--help` and usage errors: nest-commander words those.
 */
export async function runHotCommand(argv: string[], given?: PlainSeams): Promise<boolean> {
  const hot = Object.hasOwn(HOT_COMMANDS, argv[0]) ? HOT_COMMANDS[argv[0]] : undefined;
  const args = argv.slice(1);
  if (!hot || wantsHelp(attachFlagValues(args, hot.specs))) return false;
  const options = parseFlagArgs(hot.specs, args);
  if (!options || hot.nestWhen?.(options)) return false;
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
