import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { registeredRepos, resumeMergeQueues } from '@app/worktree';
import { API_CONTEXT, ApiContext } from '../common/api-context';

/**
 * Resumes the merge queues of this runs root's repositories when the server starts (issue #31):
 * a merge that was verifying when the previous owner died is re-verified from a clean scratch
 * worktree, the queued ones follow in order; each outcome lands in the queue record, the task's
 * WORKTREE.yaml and its bus. Runs in the background: start-up never waits for a verify command.
 */
@Injectable()
export class MergeQueueService implements OnApplicationBootstrap {
  private readonly logger = new Logger('merge-queue');
  /** The background resumption (tests and shutdown may await it). */
  resumed?: Promise<unknown>;

  constructor(@Inject(API_CONTEXT) private readonly ctx: ApiContext) {}

  onApplicationBootstrap(): void {
    const repos = registeredRepos(this.ctx.root);
    if (!repos.length) return;
    this.resumed = resumeMergeQueues(repos, {
      writers: this.ctx.systemWriters,
      onFound: (r) => this.logger.log(`merge queue of ${r.repo}: resuming ${r.pending} merge(s), ${r.interrupted} interrupted during verify (re-verified from a clean scratch worktree)`),
    }).then((reports) => {
      for (const r of reports) {
        if (r.error) this.logger.warn(`merge queue of ${r.repo}: ${r.error}`);
        else this.logger.log(`merge queue of ${r.repo}: ran ${r.ran} merge(s); outcomes in ${r.repo}/.conductor/merge-queue.yaml`);
      }
    });
  }
}
