import { UsageError } from '../../common/cli-errors';
import { readUserFile } from '@app/storage';

/** A strict integer flag value (negative allowed when `min` permits). */
export function intFlag(value: string, flag: string, min = 0): number {
  if (!/^\s*-?\d+\s*$/.test(value)) throw new UsageError(`invalid ${flag} "${value}": must be an integer`);
  const n = Number(value.trim());
  if (n < min) throw new UsageError(`invalid ${flag} "${value}": must be at least ${min}`);
  return n;
}

/** Exactly one of an inline text flag and a file flag; the file must be readable and not empty. */
export function textOrFile(text: string | undefined, file: string | undefined, name: string): { text: string; file?: string } {
  if (text !== undefined && file !== undefined) throw new UsageError(`--${name} and --${name}-file are mutually exclusive`);
  if (file !== undefined) {
    let content: string;
    try {
      content = readUserFile(file);
    } catch (err) {
      throw new UsageError(`read --${name}-file: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `no such file: ${file}` : (err as Error).message}`);
    }
    if (!content.trim()) throw new UsageError(`--${name}-file "${file}" is empty`);
    return { text: content, file };
  }
  if (text === undefined || !text.trim()) throw new UsageError(`one of --${name} or --${name}-file is required`);
  return { text };
}

export function required(value: string | undefined, flag: string): string {
  if (!value?.trim()) throw new UsageError(`${flag} is required`);
  return value.trim();
}
