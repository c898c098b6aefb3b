import { UsageError } from '@app/boot';
import { readUserFile } from '@app/storage';
import { parseGoalSpec, type GoalWorkflowSpec } from './goal-spec';

/** The `--spec` file of `goal run` (run-agent and conductor): read and parsed; an unreadable file is a usage error. */
export function readGoalSpecFile(path: string): GoalWorkflowSpec {
  let text: string;
  try {
    text = readUserFile(path);
  } catch (err) {
    throw new UsageError(`read --spec: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `no such file: ${path}` : (err as Error).message}`);
  }
  return parseGoalSpec(text, path);
}
