import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The managed alias block of `run-agent shell-setup` in a shell rc file. */
export const BLOCK_START = '# >>> conductor-loop shell aliases (managed by run-agent shell-setup) >>>';
export const BLOCK_END = '# <<< conductor-loop shell aliases (managed by run-agent shell-setup) <<<';
const AGENTS = ['claude', 'codex', 'gemini'];

export function buildBlock(bin: string): string {
  return [
    BLOCK_START,
    '# Safe opt-in: aliases are installed only when this command is run explicitly.',
    '# Remove with: run-agent shell-setup uninstall',
    ...AGENTS.map((a) => `alias ${a}='${bin} wrap --agent ${a} --'`),
    BLOCK_END,
    '',
  ].join('\n');
}

function locateBlock(content: string): { start: number; end: number } | undefined {
  const start = content.indexOf(BLOCK_START);
  if (start < 0) return undefined;
  const endMarker = content.indexOf(BLOCK_END, start);
  if (endMarker < 0) throw new Error('found shell-setup start marker without end marker');
  let end = endMarker + BLOCK_END.length;
  if (content[end] === '\n') end++;
  return { start, end };
}

/** Replaces the managed block, or appends it after a blank line. */
export function installBlock(content: string, block: string): string {
  const found = locateBlock(content);
  if (found) return content.slice(0, found.start) + block + content.slice(found.end);
  let base = content;
  if (base !== '' && !base.endsWith('\n')) base += '\n';
  if (base !== '' && !base.endsWith('\n\n')) base += '\n';
  return base + block;
}

/** Removes the managed block and the newline before it; undefined when there is none. */
export function uninstallBlock(content: string): string | undefined {
  const found = locateBlock(content);
  if (!found) return undefined;
  const start = found.start > 0 && content[found.start - 1] === '\n' ? found.start - 1 : found.start;
  return content.slice(0, start) + content.slice(found.end);
}

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new Error(`read ${path}: ${(err as Error).message}`);
  }
}

/** Adds or refreshes the block in `rcFile`; false when it was already there as is. */
export function installShellAliases(rcFile: string, bin: string): boolean {
  const current = readOptional(rcFile);
  const updated = installBlock(current, buildBlock(bin));
  if (updated === current) return false;
  mkdirSync(dirname(rcFile), { recursive: true });
  writeFileSync(rcFile, updated);
  return true;
}

/** Removes the block from `rcFile`; false when there was none. */
export function uninstallShellAliases(rcFile: string): boolean {
  const updated = uninstallBlock(readOptional(rcFile));
  if (updated === undefined) return false;
  writeFileSync(rcFile, updated);
  return true;
}
