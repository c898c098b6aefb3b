import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ConductorMcp } from '@app/mcp';
import { MessageBusService } from '@app/messagebus';
import { CHANGE_FEED, type ChangeFeed } from '@app/storage';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { TasksService } from '../tasks/tasks.service';
import { ApiTaskStarter } from './api-task-starter';
import { ApiError } from '../common/api-error';
import { checkCrossSite } from '../security/state-change-guard';

type McpRuntime = typeof import('./mcp-runtime');
let runtime: McpRuntime | undefined;
/** The MCP SDK, loaded on the first /mcp request (mcp-runtime.ts). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const mcpRuntime = (): McpRuntime => (runtime ??= require('./mcp-runtime') as McpRuntime);

interface Session {
  transport: StreamableHTTPServerTransport;
  mcp: ConductorMcp;
}

function sendJson(reply: FastifyReply, status: number, body: unknown): void {
  reply.raw.writeHead(status, { 'Content-Type': 'application/json' });
  reply.raw.end(JSON.stringify(body));
}

/** Streamable HTTP sessions of /mcp: one MCP server per session, scoped to the server's runs root. */
@Injectable()
export class McpSessions implements OnApplicationShutdown {
  private readonly sessions = new Map<string, Session>();

  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    private readonly tasks: TasksService,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    private readonly bus: MessageBusService,
  ) {}

  get count(): number {
    return this.sessions.size;
  }

  async handle(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack();
    try {
      checkCrossSite(req, this.ctx.corsOrigins, this.ctx.hostPolicy);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      sendJson(reply, 403, { error: 'forbidden', message: err.message });
      return;
    }
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (existing) {
      await existing.transport.handleRequest(req.raw, reply.raw, req.body);
      return;
    }
    if (id !== undefined) {
      sendJson(reply, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'session not found' }, id: null });
      return;
    }
    const { isInitializeRequest, createConductorMcp, StreamableHTTPServerTransport } = mcpRuntime();
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      sendJson(reply, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'no session: send initialize first' }, id: null });
      return;
    }
    const mcp = createConductorMcp({ scope: { root: this.ctx.root }, config: this.ctx.config, feed: this.feed, index: this.ctx.index, writers: this.bus.writers, starter: new ApiTaskStarter(this.ctx, this.tasks, req), version: this.ctx.version });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void this.sessions.set(sid, { transport, mcp }),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      void mcp.close().catch(() => undefined);
    };
    await mcp.server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  }

  async onApplicationShutdown(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.mcp.close()));
  }
}
