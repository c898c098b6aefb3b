import { readUserFile } from '@app/storage';
import { UsageError } from '../../common/cli-errors';

/** The flags of `run-agent job batch`. */
export interface BatchFlags {
  root?: string;
  config?: string;
  project?: string;
  task?: string[] | string;
  agent?: string;
  prompt?: string[] | string;
  promptFile?: string[] | string;
  cwd?: string;
  conductorUrl?: string;
  parentRunId?: string;
  timeout?: string;
  continueOnFail?: boolean;
}

export function list(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** All --prompt values, then all --prompt-file contents (cli-storage.md §1.6). */
export function batchPrompts(flags: BatchFlags): string[] {
  const prompts: string[] = [];
  list(flags.prompt).forEach((p, i) => {
    if (!p.trim()) throw new UsageError(`prompt at index ${i} is empty`);
    prompts.push(p.trim());
  });
  for (const file of list(flags.promptFile)) {
    let text: string;
    try {
      text = readUserFile(file);
    } catch (err) {
      throw new UsageError(`read prompt file: ${(err as Error).message}`);
    }
    if (!text.trim()) throw new UsageError(`prompt file "${file}" is empty`);
    prompts.push(text.trim());
  }
  if (prompts.length === 0) throw new UsageError('at least one --prompt or --prompt-file is required');
  return prompts;
}
