import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { MessageBusService } from '@app/messagebus';
import { answerQuestion, isTaskLoopRunning } from '@app/runner';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory, validateProjectId, validateTaskId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { readStdinIfPiped } from '../bus/bus-post';
import { resolveRoot } from '../engine/support/runs-root';
import { inferScope } from '../engine/support/scope';
import { TaskScopeParsers } from '../engine/task-options';

interface AnswerFlags {
  root?: string;
  project?: string;
  task?: string;
  body?: string;
  question?: string;
}

@Command({
  name: 'answer',
  description:
    "Answer a task's open question(s): posts an ANSWER whose parent is the question's msg_id; the waiting Ralph loop " +
    'resumes with the question and the answer in the next prompt, and `ask --wait` returns it.',
})
export class AnswerCommand extends TaskScopeParsers {
  constructor(
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(_args: string[], flags: AnswerFlags = {}): Promise<void> {
    await this.answer(flags);
  }

  private async answer(flags: AnswerFlags): Promise<void> {
    const root = resolveRoot(flags.root);
    const scope = inferScope({ project: flags.project, task: flags.task }, { root });
    if (!scope.project || !scope.task) throw new UsageError('--project and --task are required (or run inside a task)');
    const projectId = validateProjectId(scope.project);
    const taskId = validateTaskId(scope.task);
    let body = flags.body ?? '';
    if (body === '') body = readStdinIfPiped() ?? '';
    if (body.trim() === '') throw new UsageError('--body is required (or pipe the answer on stdin)');
    const layout = this.indexFor(root).layout;
    const taskDir = layout.taskDir(projectId, taskId);
    const questionId = flags.question?.trim() || undefined;
    const { answer, questions } = await answerQuestion({ busPath: layout.taskBus(projectId, taskId), writers: this.bus.writers, taskDir, projectId, taskId, body, questionId });
    process.stdout.write(`msg_id: ${answer.msg_id}\nanswers: ${questions.map((q) => q.msg_id).join(', ')}\n`);
    if (!isTaskLoopRunning(taskDir)) {
      process.stderr.write(`note: no Ralph loop of ${taskId} is running; start one with run-agent task resume --project ${projectId} --task ${taskId}\n`);
    }
  }

  @Option({ flags: '--body <text>', description: 'the answer (read from stdin when omitted and stdin is not a terminal)' })
  parseBody(v: string): string {
    return v;
  }

  @Option({ flags: '--question <msg_id>', description: 'answer only this question (default: every open question of the task)' })
  parseQuestion(v: string): string {
    return v;
  }
}
