import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { findProjectByHomeFolder, findSourceProjectRoot, initProjectHome, suggestProjectId, validateProjectId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { inferScope } from '../engine/support/scope';

export const CANNOT_INFER_PROJECT = 'cannot infer project: pass --project or run from inside a task or project directory';

/** Reads one line from stdin; undefined at EOF. */
function readLine(input: NodeJS.ReadableStream): Promise<string | undefined> {
  return new Promise((done) => {
    const rl = createInterface({ input, terminal: false });
    let answered = false;
    rl.once('line', (line) => {
      answered = true;
      rl.close();
      done(line);
    });
    rl.once('close', () => {
      if (!answered) done(undefined);
    });
  });
}

/**
 * Interactive project init (§3.9): asks for a project id (suggesting the folder name), creates
 * `<root>/<id>/` with home-folders.md pointing at the source root and an empty project bus.
 */
export async function promptProjectInit(
  root: string,
  sourceRoot: string,
  io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream } = { input: process.stdin, output: process.stderr },
): Promise<string> {
  const suggestion = suggestProjectId(sourceRoot);
  io.output.write(`No project found for: ${sourceRoot}\nProject ID [${suggestion}]: `);
  const line = await readLine(io.input);
  if (line === undefined) throw new Error('project init cancelled');
  const id = line.trim() || suggestion;
  validateProjectId(id);
  const dir = initProjectHome(root, id, sourceRoot);
  io.output.write(`Project "${id}" created at ${dir}\n`);
  return id;
}

/**
 * Project of a command: --project, then JRUN_* and the working directory (D7), then the
 * home-folders.md link of the source folder, then (stdin is a terminal) interactive init.
 */
export async function resolveProject(flag: string | undefined, root: string, opts: { cwd?: string; interactive?: boolean } = {}): Promise<string> {
  const cwd = resolve(opts.cwd ?? process.cwd());
  const explicit = flag?.trim();
  const found = explicit || inferScope({}, { root, cwd }).project || findProjectByHomeFolder(root, findSourceProjectRoot(cwd));
  if (found) return validateProjectId(found);
  if (opts.interactive ?? process.stdin.isTTY === true) return promptProjectInit(root, findSourceProjectRoot(cwd));
  throw new UsageError(CANNOT_INFER_PROJECT);
}
