import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { GithubPullRequests } from '@app/triggers';
import { TaskLoopEvents } from '../tasks/task-loop-events';

/** Each attempt end and loop end of an in-process loop syncs the task's pull request (docs/triggers.md). */
@Injectable()
export class ForgeLoopHook implements OnModuleInit, OnModuleDestroy {
  private off?: () => void;

  constructor(
    private readonly events: TaskLoopEvents,
    private readonly pulls: GithubPullRequests,
  ) {}

  onModuleInit(): void {
    this.off = this.events.on((e) => this.pulls.taskChanged(e.projectId, e.taskId));
  }

  onModuleDestroy(): void {
    this.off?.();
  }
}
