import type { RunNode } from '@app/runner';
import { UsageError } from '../../../common/cli-errors';
import { formatTable } from './table';

/**
 * The text view of `list --tree` and `status --tree`: one line per task (its status), its runs
 * indented beneath it and each sub-agent run indented beneath the run that started it; a run of
 * another task names that task in brackets.
 */

export const TREE_HEADER = ['TASK / RUN', 'STATUS', 'EXIT_CODE', 'AGENT', 'STARTED', 'DURATION'];

const dash = (v: string | number | null | undefined): string => (v === null || v === undefined || v === '' ? '-' : String(v));

function runLines(trees: RunNode[], parentTask: string, depth: number): string[][] {
  return trees.flatMap((n) => [
    [
      `${'  '.repeat(depth)}${n.run_id}${n.task_id !== parentTask ? ` [${n.task_id}]` : ''}`,
      n.status,
      dash(n.exit_code),
      dash(n.agent),
      dash(n.started),
      dash(n.duration),
    ],
    ...runLines(n.children, n.task_id, depth + 1),
  ]);
}

/** A task line (its id and status cells) followed by its run trees. */
export interface TreeTask {
  cells: string[];
  task_id: string;
  tree: RunNode[];
}

export function renderRunTree(tasks: TreeTask[]): string {
  return formatTable([TREE_HEADER, ...tasks.flatMap((t) => [t.cells, ...runLines(t.tree, t.task_id, 1)])]);
}

/** `--tree` has its own columns: flags that add columns or change the row format are refused (outside --json). */
export function checkTreeFlags(opts: { tree?: boolean; json?: boolean } & Record<string, unknown>, columnFlags: Record<string, string>): void {
  if (!opts.tree || opts.json) return;
  for (const [key, flag] of Object.entries(columnFlags)) {
    if (opts[key]) throw new UsageError(`--tree cannot be used with ${flag} (use --json for the tree with every field)`);
  }
}
