import { Command, CommandRunner, Option } from 'nest-commander';
import { MessageBusService } from '@app/messagebus';
import { askQuestion, waitForAnswer } from '@app/runner';
import { UsageError } from '../../common/cli-errors';
import { resolvePostBus, resolvePostScope, readStdinIfPiped } from '../bus/bus-post';
import { durationFlag } from '../engine/support/options';
import { taskOfBus } from './task-bus';

interface AskFlags {
  root?: string;
  project?: string;
  task?: string;
  run?: string;
  body?: string;
  type?: string;
  wait?: boolean;
  timeout?: string;
}

const QUESTION_KINDS = ['QUESTION', 'BLOCKED'];

@Command({
  name: 'ask',
  description:
    'Ask the task owner a question: posts a QUESTION (or BLOCKED) to the task bus, which puts the task in needs_input. ' +
    'Prints msg_id: <id>; with --wait, blocks until an ANSWER arrives and prints its body.',
})
export class AskCommand extends CommandRunner {
  constructor(private readonly bus: MessageBusService) {
    super();
  }

  async run(_args: string[], flags: AskFlags = {}): Promise<void> {
    await this.ask(flags);
  }

  private async ask(flags: AskFlags): Promise<void> {
    const type = (flags.type ?? 'QUESTION').trim().toUpperCase();
    if (!QUESTION_KINDS.includes(type)) throw new UsageError(`--type must be QUESTION or BLOCKED, got "${flags.type}"`);
    const timeoutMs = flags.timeout !== undefined ? durationFlag(flags.timeout, '--timeout') : 0;
    const io = { env: process.env, cwd: process.cwd() };
    const busPath = resolvePostBus({ root: flags.root, project: flags.project, task: flags.task }, io);
    const { taskDir } = taskOfBus(busPath);
    const scope = resolvePostScope({ project: flags.project, task: flags.task, run: flags.run }, busPath, io);
    if (!scope.project || !scope.task) throw new UsageError('cannot infer the task: give --project and --task or run inside a task');
    let body = flags.body ?? '';
    if (body === '') body = readStdinIfPiped() ?? '';
    if (body.trim() === '') throw new UsageError('--body is required (or pipe the question on stdin)');
    const question = await askQuestion({ busPath, taskDir, projectId: scope.project, taskId: scope.task, runId: scope.run, body, type: type as 'QUESTION' | 'BLOCKED', writers: this.bus.writers });
    if (!flags.wait) {
      process.stdout.write(`msg_id: ${question.msg_id}\n`);
      return;
    }
    process.stderr.write(`waiting for an answer to ${question.msg_id}\n`);
    const answer = await waitForAnswer(busPath, question.msg_id, { timeoutMs });
    process.stdout.write(answer.body.endsWith('\n') ? answer.body : `${answer.body}\n`);
  }

  @Option({ flags: '--body <text>', description: 'the question (read from stdin when omitted and stdin is not a terminal)' })
  parseBody(v: string): string {
    return v;
  }

  @Option({ flags: '--type <type>', description: 'QUESTION (default) or BLOCKED' })
  parseType(v: string): string {
    return v;
  }

  @Option({ flags: '--wait', description: 'block until the question is answered and print the answer' })
  parseWait(): boolean {
    return true;
  }

  @Option({ flags: '--timeout <duration>', description: 'with --wait: give up after this long (Go duration; default: no limit), exit 1' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project id (default: $JRUN_PROJECT_ID or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task id (default: $JRUN_TASK_ID or the working directory)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--run <id>', description: 'run id stored in the message (default: $JRUN_ID)' })
  parseRun(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }
}
