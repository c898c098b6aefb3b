import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages, type BusMessage } from '@app/messagebus';
import { makeRepo } from '../../utils/git-repo';
import { Sandbox } from '../cli/inspect-helpers';

export const P = 'wt-project';
export const T1 = 'task-20260101-120000-alpha';
export const T2 = 'task-20260101-120000-beta';

/**
 * A sandbox with a real git repository and a `command` agent (a shell script) that writes
 * $WRITE_TEXT into shared.txt of its working directory, records where it ran, and marks DONE.
 */
export class WorktreeSandbox extends Sandbox {
  readonly repo = makeRepo(join(this.dir, 'repo'));
  readonly agent = join(this.dir, 'writer.sh');
  readonly config = join(this.dir, 'config.yaml');

  constructor(worktreeSection = '') {
    super();
    writeFileSync(
      this.agent,
      '#!/bin/sh\ncat > /dev/null\nprintf "line one\\n%s\\nline three\\n" "$WRITE_TEXT" > shared.txt\n' +
        'printf "%s\\n%s\\n%s\\n" "$(pwd)" "$JRUN_WORKTREE" "$JRUN_PORT" > "$JRUN_RUN_FOLDER/where.txt"\n' +
        'touch "$JRUN_TASK_FOLDER/DONE"\necho wrote\n',
    );
    chmodSync(this.agent, 0o755);
    this.writeConfig(worktreeSection);
  }

  writeConfig(worktreeSection: string): void {
    writeFileSync(this.config, `agents:\n  writer:\n    type: command\n    command: ${this.agent}\n${worktreeSection}`);
  }

  taskDir(task: string): string {
    return join(this.root, P, task);
  }

  bus(task: string): BusMessage[] {
    return readMessages(join(this.taskDir(task), 'TASK-MESSAGE-BUS.md'));
  }

  /** `run-agent task` in its own worktree of the sandbox repository. */
  task(task: string, text: string, extra: string[] = []) {
    return this.run(
      ['task', '--root', this.root, '--config', this.config, '--project', P, '--task', task, '--agent', 'writer', '--prompt', 'write', '--max-restarts', '0', '--worktree', '--repo', this.repo, ...extra],
      { env: { WRITE_TEXT: text } },
    );
  }

  scope(task: string): string[] {
    return ['--root', this.root, '--project', P, '--task', task];
  }

  read(path: string): string {
    return readFileSync(path, 'utf8');
  }
}
