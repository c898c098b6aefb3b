import { Inject, Injectable, Logger } from '@nestjs/common';
import { scanOpenQuestions, toRestQuestion } from '@app/runner';
import { readTaskPrompt } from '@app/storage';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { formatTime } from '../common/go-format';
import { byCodeUnits, cursorPage, type PageQuery } from '../projects/pagination';
import { MetricsService } from '../metrics/metrics.service';
import { applyTaskWrite } from '../tasks/scaleout-hooks';
import { TASK_LAUNCHER, TaskLauncher } from '../tasks/task-launcher';


export { toRestQuestion };

/** Answers, open-question listing and waking of finished tasks for the API (#17). */
@Injectable()
export class NeedsInputService {
  private readonly logger = new Logger('needs-input');

  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    @Inject(TASK_LAUNCHER) private readonly launcher: TaskLauncher,
    private readonly metrics: MetricsService,
  ) {}

  /** One page of the open questions (issue #29), by `<project>/<task>/<msg_id>`: next_cursor → after=. */
  openQuestions(projectId: string | undefined, q: PageQuery) {
    const keyed = scanOpenQuestions(this.ctx.layout, projectId)
      .flatMap((t) => t.questions.map((question) => ({ question, key: `${t.project_id}/${t.task_id}/${question.msg_id}` })))
      .sort((a, b) => byCodeUnits(a.key, b.key));
    const { page, ...more } = cursorPage(keyed, (k) => k.key, q);
    return { questions: page.map((k) => toRestQuestion(k.question)), ...more };
  }

  async answer(projectId: string, taskId: string, body: string, questionId?: string) {
    const { message, answered } = await applyTaskWrite(this.ctx, { op: 'answer', projectId, taskId, body, questionId });
    this.metrics.countBusMessages([message!.msg_id]);
    return { msg_id: message!.msg_id, timestamp: formatTime(new Date(message!.ts)), answers: answered ?? [] };
  }

  /** `resume: true`: post marked as waking, remove DONE, and start a loop when none holds the task. */
  async wake(projectId: string, taskId: string, type: string | undefined, body: string) {
    const woken = await applyTaskWrite(this.ctx, { op: 'wake', projectId, taskId, body, type });
    this.metrics.countBusMessages([woken.message!.msg_id]);
    let loop: 'running' | 'started' | 'not_started' = woken.loopRunning ? 'running' : 'not_started';
    if (!woken.loopRunning && !this.ctx.disableTaskStart) {
      const taskDir = this.ctx.layout.taskDir(projectId, taskId);
      // the task's own agent (its config name, not its type: several agents may share a type)
      const agentType = woken.agent ?? this.ctx.config?.defaults?.agent;
      const prompt = readTaskPrompt(taskDir);
      if (agentType && prompt) {
        const { runId, dir } = this.ctx.layout.allocateRunDir(projectId, taskId);
        void this.launcher
          .launch({ projectId, taskId, runId, runDir: dir, prompt, agentType, projectRoot: woken.cwd })
          .catch((err) => this.logger.error(`wake ${projectId}/${taskId}: ${(err as Error).message}`));
        loop = 'started';
      }
    }
    return { msg_id: woken.message!.msg_id, timestamp: formatTime(new Date(woken.message!.ts)), resumed: true, reopened: !!woken.reopened, loop };
  }
}
