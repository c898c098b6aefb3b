/**
 * Start-up trimming of the Nest path (docs/decisions.md, "CLI start-up"). Plain Node only: this
 * file runs before NestJS is loaded and must not import it.
 *
 * - nest-commander's CommandRunnerModule requires `inquirer` eagerly (with lodash, rxjs and ~250
 *   modules) although no command of ours prompts. We register a stand-in whose properties load the
 *   real package on first use, so prompting still works if a command ever asks.
 * (V8's compile cache is switched on earlier, in bin/launch.js; rxjs comes from its bundle as in
 * the server: libs/boot/src/lean-load.ts.)
 */
import { cacheAs, resolveFrom } from '@app/boot/lean-load';

const INQUIRER_KEYS = ['prompts', 'Separator', 'ui', 'createPromptModule', 'prompt', 'registerPrompt', 'restoreDefaultPrompts'];

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
