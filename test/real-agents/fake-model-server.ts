import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** One request seen by the fake model server (for assertions and debugging). */
export interface SeenRequest {
  method: string;
  url: string;
  body: string;
}

/**
 * A tiny stand-in for the model APIs the real agent CLIs talk to, on 127.0.0.1:
 * Anthropic Messages (claude), OpenAI Responses (codex) and Gemini generateContent (gemini).
 * Every model call answers with `answer`, streamed in small chunks.
 */
export class FakeModelServer {
  readonly requests: SeenRequest[] = [];
  private server?: Server;
  url = '';

  /**
   * @param answer the final text of every conversation
   * @param toolCall when set, the first model turn of a conversation asks to run this shell
   *   command (the CLI's own shell tool), and the answer follows once its result comes back
   */
  constructor(
    private readonly answer: string,
    private readonly toolCall?: string,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.requests.push({ method: req.method ?? '', url: req.url ?? '', body });
        this.route(req, res, body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = req.url ?? '';
    const json = safeJson(body);
    if (req.method === 'POST' && url.startsWith('/v1/messages/count_tokens')) return sendJson(res, { input_tokens: 42 });
    if (req.method === 'POST' && url.startsWith('/v1/messages')) return this.anthropic(res, json);
    if (req.method === 'POST' && /\/responses(\?|$)/.test(url)) return this.openaiResponses(res, json);
    if (req.method === 'POST' && url.includes(':countTokens')) return sendJson(res, { totalTokens: 42 });
    if (req.method === 'POST' && url.includes(':streamGenerateContent')) return this.geminiStream(res, json);
    if (req.method === 'POST' && url.includes(':generateContent')) return this.geminiSingle(res, json);
    if (req.method === 'GET' && url.startsWith('/v1/models')) return sendJson(res, { object: 'list', data: [{ id: 'fake-model', object: 'model' }], models: [] });
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `fake model server: no route for ${req.method} ${url}` } }));
  }

  private chunks(): string[] {
    return this.answer.match(/\s*\S+/g) ?? [this.answer];
  }

  private anthropic(res: ServerResponse, req: Record<string, unknown>): void {
    const model = typeof req.model === 'string' ? req.model : 'claude-fake';
    const id = `msg_fake_${this.requests.length}`;
    const usage = { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (req.stream !== true) {
      return sendJson(res, { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: this.answer }], stop_reason: 'end_turn', stop_sequence: null, usage });
    }
    const messages = Array.isArray(req.messages) ? (req.messages as { content?: unknown }[]) : [];
    const hasToolResult = messages.some((m) => Array.isArray(m.content) && m.content.some((b: { type?: string }) => b?.type === 'tool_result'));
    const offersBash = Array.isArray(req.tools) && req.tools.some((t: { name?: string }) => t?.name === 'Bash');
    if (this.toolCall && offersBash && !hasToolResult) return this.anthropicToolUse(res, id, model, usage);
    const events: [string, unknown][] = [
      ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ...this.chunks().map((text): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }]),
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }],
      ['message_stop', { type: 'message_stop' }],
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [name, data] of events) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    res.end();
  }

  private anthropicToolUse(res: ServerResponse, id: string, model: string, usage: Record<string, number>): void {
    const input = JSON.stringify({ command: this.toolCall, description: 'Read the task' });
    const events: [string, unknown][] = [
      ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Reading the task first.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: `toolu_fake_${this.requests.length}`, name: 'Bash', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: input.slice(0, 10) } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: input.slice(10) } }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } }],
      ['message_stop', { type: 'message_stop' }],
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [name, data] of events) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    res.end();
  }

  private openaiResponses(res: ServerResponse, req: Record<string, unknown>): void {
    const model = typeof req.model === 'string' ? req.model : 'gpt-fake';
    const id = `resp_fake_${this.requests.length}`;
    const itemId = `msg_fake_${this.requests.length}`;
    const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] as unknown[] };
    const message = { id: itemId, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: this.answer, annotations: [] }] };
    let seq = 0;
    const input = Array.isArray(req.input) ? (req.input as { type?: string }[]) : [];
    const offersExec = Array.isArray(req.tools) && req.tools.some((t: { name?: string }) => t?.name === 'exec_command');
    if (this.toolCall && offersExec && !input.some((i) => i?.type === 'function_call_output')) {
      const call = { id: `fc_fake_${this.requests.length}`, type: 'function_call', status: 'completed', call_id: `call_fake_${this.requests.length}`, name: 'exec_command', arguments: JSON.stringify({ cmd: this.toolCall }) };
      const events = [
        { type: 'response.created', response: base },
        { type: 'response.output_item.added', output_index: 0, item: { ...call, status: 'in_progress', arguments: '' } },
        { type: 'response.function_call_arguments.delta', item_id: call.id, output_index: 0, delta: call.arguments },
        { type: 'response.function_call_arguments.done', item_id: call.id, output_index: 0, arguments: call.arguments },
        { type: 'response.output_item.done', output_index: 0, item: call },
        { type: 'response.completed', response: { ...base, status: 'completed', output: [call], usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 21 } } },
      ];
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: seq++ })}\n\n`);
      return void res.end();
    }
    const events: Record<string, unknown>[] = [
      { type: 'response.created', response: base },
      { type: 'response.in_progress', response: base },
      { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.content_part.added', item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
      ...this.chunks().map((delta) => ({ type: 'response.output_text.delta', item_id: itemId, output_index: 0, content_index: 0, delta })),
      { type: 'response.output_text.done', item_id: itemId, output_index: 0, content_index: 0, text: this.answer },
      { type: 'response.content_part.done', item_id: itemId, output_index: 0, content_index: 0, part: message.content[0] },
      { type: 'response.output_item.done', output_index: 0, item: message },
      {
        type: 'response.completed',
        response: { ...base, status: 'completed', output: [message], usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 19 } },
      },
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const e of events) res.write(`event: ${String(e.type)}\ndata: ${JSON.stringify({ ...e, sequence_number: seq++ })}\n\n`);
    res.end();
  }

  private geminiCandidate(text: string, finish?: string): Record<string, unknown> {
    return {
      candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 },
      modelVersion: 'gemini-fake',
    };
  }

  private geminiStream(res: ServerResponse, req: Record<string, unknown>): void {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const contents = Array.isArray(req.contents) ? (req.contents as { parts?: { functionResponse?: unknown }[] }[]) : [];
    const answered = contents.some((c) => Array.isArray(c.parts) && c.parts.some((p) => p?.functionResponse !== undefined));
    const tools = Array.isArray(req.tools) ? (req.tools as { functionDeclarations?: { name?: string }[] }[]) : [];
    const offersShell = tools.some((t) => (t.functionDeclarations ?? []).some((f) => f.name === 'run_shell_command'));
    if (this.toolCall && offersShell && !answered) {
      const call = { candidates: [{ content: { parts: [{ text: 'Reading the task first.' }, { functionCall: { name: 'run_shell_command', args: { command: this.toolCall, description: 'Read the task' } } }], role: 'model' }, index: 0, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 9, totalTokenCount: 21 }, modelVersion: 'gemini-fake' };
      res.write(`data: ${JSON.stringify(call)}\n\n`);
      return void res.end();
    }
    const chunks = this.chunks();
    chunks.forEach((text, i) => res.write(`data: ${JSON.stringify(this.geminiCandidate(text, i === chunks.length - 1 ? 'STOP' : undefined))}\n\n`));
    res.end();
  }

  private geminiSingle(res: ServerResponse, req: Record<string, unknown>): void {
    // Side calls (e.g. "who speaks next", routing) ask for JSON; give a harmless structured answer.
    const config = (req.generationConfig ?? {}) as Record<string, unknown>;
    if (config.responseMimeType === 'application/json') {
      return sendJson(res, this.geminiCandidate(JSON.stringify({ reasoning: 'fake', next_speaker: 'user', model_choice: 'flash', complexity_reasoning: 'fake', complexity_score: 1 }), 'STOP'));
    }
    sendJson(res, this.geminiCandidate(this.answer, 'STOP'));
  }
}

function sendJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function safeJson(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
