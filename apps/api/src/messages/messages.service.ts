import { toRestMessage } from '@app/runner';
import { Inject, Injectable } from '@nestjs/common';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BusPageRequest, checkBusPath, MessageBusService, readBusPage, validateHeaderFields } from '@app/messagebus';
import { checkRealPathInside } from '@app/storage';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { ApiError, badRequest } from '../common/api-error';
import { formatTime } from '../common/go-format';
import { confine } from '../security/path-confinement';
import { applyTaskWrite, postProjectMessage } from '../tasks/scaleout-hooks';

export const MESSAGE_LIMIT_MAX = 5000;

/** Bus reads and writes for the message routes (api.md §1.2 #18/#19, §1.3 #29/#30/#37/#38). */
@Injectable()
export class MessagesService {
  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly bus: MessageBusService,
  ) {}

  busPath(projectId: string, taskId?: string): string {
    const p = taskId ? this.ctx.layout.taskBus(projectId, taskId) : this.ctx.layout.projectBus(projectId);
    const bus = confine(this.ctx.root, p, 'message bus path');
    // a project or task folder that is a symlink out of the root is not followed (issue #29)
    checkRealPathInside(this.ctx.root, path.dirname(bus), 'message bus path');
    return bus;
  }

  /**
   * One page of a bus (issue #29: bounded by default). `newest`/`since` pages carry
   * `next_cursor` = the oldest message returned (pass it as `before`), `oldest` pages the newest
   * one (pass it as `after`), both only while `has_more`. Unknown cursor → 404 `message id not
   * found`; missing bus → [].
   */
  list(busPath: string, req: BusPageRequest): { messages: ReturnType<typeof toRestMessage>[]; has_more: boolean; next_cursor?: string } {
    // a FIFO, device, folder or symlink in place of the bus: BusError → 403, nothing opened (issue #29)
    if (!checkBusPath(busPath)) {
      const cursor = req.kind === 'newest' ? req.before : req.kind === 'oldest' ? req.after : req.since;
      if (cursor) throw new ApiError('NOT_FOUND', 'message id not found');
      return { messages: [], has_more: false };
    }
    const page = readBusPage(busPath, req);
    const out: { messages: ReturnType<typeof toRestMessage>[]; has_more: boolean; next_cursor?: string } = { messages: page.messages.map(toRestMessage), has_more: page.hasMore };
    if (page.hasMore && page.messages.length > 0) out.next_cursor = (req.kind === 'oldest' ? page.messages[page.messages.length - 1] : page.messages[0]).msg_id;
    return out;
  }

  async post(input: { projectId: string; taskId?: string; runId?: string; type?: string; body: string }) {
    if (input.body.trim() === '') throw badRequest('body is required');
    const header = { type: input.type?.trim() || 'USER', project_id: input.projectId, task_id: input.taskId ?? '', run_id: input.runId ?? '' };
    validateHeaderFields(header);
    const bus = this.busPath(input.projectId, input.taskId);
    const maxBodyBytes = this.ctx.config?.storage?.max_message_body_bytes || undefined;
    if (input.taskId) {
      // a task's bus: written by the task's owner (here, or its worker with --nats)
      const { message } = await applyTaskWrite(this.ctx, { op: 'post', projectId: input.projectId, taskId: input.taskId, type: header.type, runId: header.run_id, body: input.body, maxBodyBytes });
      return { msg_id: message!.msg_id, timestamp: formatTime(new Date(message!.ts)) };
    }
    // with --nats the replica is written by replication only: the post goes through NATS
    if (this.ctx.scaleout) {
      const posted = await postProjectMessage(this.ctx.scaleout, { ...header, body: input.body }, maxBodyBytes);
      return { msg_id: posted.msg_id, timestamp: formatTime(posted.ts) };
    }
    fs.mkdirSync(path.dirname(bus), { recursive: true });
    // Counted in conductor_messagebus_appends_total by MetricsService's append observer.
    const msg = await this.bus.writer(bus).append({ ...header, body: input.body });
    return { msg_id: msg.msg_id, timestamp: formatTime(msg.ts) };
  }
}

/** `limit` query (api.md #29/#37): positive int capped at 5000; absent, invalid or ≤ 0 = the maximum (issue #29: bounded by default). */
export function parseMessageLimit(text: string | undefined): number {
  const n = Number.parseInt(text ?? '', 10);
  if (!Number.isFinite(n) || n <= 0) return MESSAGE_LIMIT_MAX;
  return Math.min(n, MESSAGE_LIMIT_MAX);
}

/** The page a project/task message list asks for: `since` (newest after it), `before` (older page) or the newest. */
export function projectPageRequest(since: string | undefined, before: string | undefined, limitText: string | undefined): BusPageRequest {
  const limit = parseMessageLimit(limitText);
  const s = since?.trim();
  const b = before?.trim();
  if (s && b) throw badRequest('since and before cannot be combined');
  if (s) return { kind: 'since', since: s, limit };
  return { kind: 'newest', before: b || undefined, limit };
}
