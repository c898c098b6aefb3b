// Rendering model for agent output: turns stdout lines (claude stream-json, codex --json,
// gemini stream-json, or plain text) into entries, and entries into display rows with folding.

export type EntryKind = 'text' | 'thinking' | 'tool_use' | 'tool_result' | 'system' | 'result' | 'error' | 'raw';

export interface LogEntry {
  kind: EntryKind;
  text: string;
  title?: string;
  /** A streamed delta that continues the previous text entry (gemini `delta: true`). */
  delta?: boolean;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Text out of a string, an array of parts, or an object with a text-like key. */
export function extractText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(extractText).filter(Boolean).join('\n');
  if (isObject(value)) {
    for (const key of ['text', 'content', 'result', 'message', 'output', 'output_text']) {
      const t = extractText(value[key]);
      if (t) return t;
    }
  }
  return '';
}

function compactJson(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function claudeEntries(ev: Json): LogEntry[] | undefined {
  const type = str(ev.type);
  if (type === 'system') {
    const parts = [str(ev.subtype) || 'system'];
    if (ev.model) parts.push(`model ${str(ev.model)}`);
    if (ev.cwd) parts.push(`cwd ${str(ev.cwd)}`);
    return [{ kind: 'system', text: parts.join(' · ') }];
  }
  if ((type === 'assistant' || type === 'user') && isObject(ev.message)) {
    const content = ev.message.content;
    if (typeof content === 'string') return type === 'assistant' ? [{ kind: 'text', text: content }] : [];
    if (!Array.isArray(content)) return [];
    const out: LogEntry[] = [];
    for (const block of content) {
      if (!isObject(block)) continue;
      switch (block.type) {
        case 'text':
          if (type === 'assistant' && str(block.text)) out.push({ kind: 'text', text: str(block.text) });
          break;
        case 'thinking':
        case 'redacted_thinking':
          out.push({ kind: 'thinking', text: str(block.thinking) || '(redacted)' });
          break;
        case 'tool_use':
        case 'server_tool_use': {
          const input = isObject(block.input) ? block.input : {};
          const summary = str(input.command) || str(input.file_path) || str(input.path) || str(input.pattern);
          out.push({ kind: 'tool_use', title: str(block.name) || 'tool', text: summary || compactJson(block.input) });
          break;
        }
        case 'tool_result':
          out.push({ kind: block.is_error ? 'error' : 'tool_result', text: extractText(block.content) });
          break;
      }
    }
    return out;
  }
  if (type === 'result' && ('is_error' in ev || 'subtype' in ev)) {
    const text = str(ev.result) || str(ev.subtype);
    return [{ kind: ev.is_error ? 'error' : 'result', title: 'result', text }];
  }
  if (type === 'stream_event') return [];
  return undefined;
}

function codexEntries(ev: Json): LogEntry[] | undefined {
  const type = str(ev.type);
  if (type === 'thread.started') return [{ kind: 'system', text: `thread ${str(ev.thread_id)}` }];
  if (type === 'turn.started') return [];
  if (type === 'turn.completed') {
    const u = isObject(ev.usage) ? ev.usage : {};
    return [{ kind: 'system', text: `turn completed · ${Number(u.input_tokens ?? 0)} in / ${Number(u.output_tokens ?? 0)} out tokens` }];
  }
  if (type === 'turn.failed' || type === 'error') {
    return [{ kind: 'error', text: extractText(ev.error) || str(ev.message) || compactJson(ev) }];
  }
  if (type.startsWith('item.') && isObject(ev.item)) {
    const item = ev.item;
    const completed = type === 'item.completed';
    switch (str(item.type)) {
      case 'agent_message':
      case 'message':
      case '':
        return completed ? [{ kind: 'text', text: extractText(item) }] : [];
      case 'reasoning':
        return completed ? [{ kind: 'thinking', text: extractText(item) }] : [];
      case 'command_execution':
        if (type === 'item.started') return [{ kind: 'tool_use', title: 'command', text: str(item.command) }];
        if (!completed) return [];
        return [
          {
            kind: typeof item.exit_code === 'number' && item.exit_code !== 0 ? 'error' : 'tool_result',
            title: `exit ${item.exit_code ?? '?'}`,
            text: str(item.aggregated_output),
          },
        ];
      case 'file_change': {
        if (!completed) return [];
        const changes = Array.isArray(item.changes) ? item.changes : [];
        const text = changes.map((c) => (isObject(c) ? `${str(c.kind)} ${str(c.path)}` : String(c))).join('\n');
        return [{ kind: 'tool_use', title: 'file change', text }];
      }
      case 'error':
        return [{ kind: 'error', text: extractText(item) }];
      default:
        return completed ? [{ kind: 'tool_use', title: str(item.type), text: extractText(item) || compactJson(item) }] : [];
    }
  }
  return undefined;
}

function geminiEntries(ev: Json): LogEntry[] | undefined {
  const type = str(ev.type);
  if (type === 'init') return [{ kind: 'system', text: `session started${ev.model ? ` · model ${str(ev.model)}` : ''}` }];
  if (type === 'message') {
    if (ev.role && ev.role !== 'assistant') return [];
    return [{ kind: 'text', text: extractText(ev.content), delta: ev.delta === true }];
  }
  if (type === 'tool_use') {
    return [{ kind: 'tool_use', title: str(ev.tool_name) || 'tool', text: compactJson(ev.parameters) }];
  }
  if (type === 'tool_result') {
    const failed = ev.status && ev.status !== 'success';
    return [{ kind: failed ? 'error' : 'tool_result', text: extractText(ev.output) || extractText(ev.error) }];
  }
  if (type === 'result') {
    const stats = isObject(ev.stats) ? ev.stats : {};
    const tokens = stats.total_tokens !== undefined ? ` · ${Number(stats.total_tokens)} tokens` : '';
    return [{ kind: ev.status === 'error' ? 'error' : 'result', title: 'result', text: (str(ev.result) || str(ev.status)) + tokens }];
  }
  return undefined;
}

/** Parses one stdout line. Plain text (and unknown JSON) become raw entries. */
export function parseAgentLine(line: string): LogEntry[] {
  const trimmed = line.trim();
  if (trimmed.startsWith('{') && trimmed.endsWith('}')) {
    let ev: unknown;
    try {
      ev = JSON.parse(trimmed);
    } catch {
      ev = undefined;
    }
    if (isObject(ev)) {
      const entries = claudeEntries(ev) ?? codexEntries(ev) ?? geminiEntries(ev);
      if (entries) return entries;
    }
  }
  return [{ kind: 'raw', text: line }];
}

/** Incremental parser: feed chunks as they arrive; only complete lines are parsed. */
export class AgentLogModel {
  readonly entries: LogEntry[] = [];
  private partial = '';
  /** Bumped on every change so views can cheaply tell the model changed. */
  version = 0;

  append(chunk: string): void {
    if (!chunk) return;
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.addLine(line.endsWith('\r') ? line.slice(0, -1) : line);
    this.version++;
  }

  /** Treats the buffered partial line as complete (end of stream or static file). */
  flush(): void {
    if (this.partial) {
      this.addLine(this.partial);
      this.partial = '';
      this.version++;
    }
  }

  reset(): void {
    this.entries.length = 0;
    this.partial = '';
    this.version++;
  }

  /** Text of the partial (not yet newline-terminated) line, shown as-is. */
  get pending(): string {
    return this.partial;
  }

  private addLine(line: string): void {
    for (const entry of parseAgentLine(line)) {
      const last = this.entries[this.entries.length - 1];
      if (entry.delta && last && last.kind === 'text' && last.delta) {
        last.text += entry.text;
      } else {
        this.entries.push(entry);
      }
    }
  }
}

export interface LogRow {
  key: string;
  entry: number;
  kind: EntryKind;
  text: string;
  /** Set on a row that folds/unfolds its entry. */
  fold?: 'collapsed' | 'expanded';
}

/** Lines of a tool result shown before it folds. */
export const RESULT_PREVIEW_LINES = 6;

const PREFIX: Partial<Record<EntryKind, string>> = { tool_use: '⚙ ', result: '✔ ', error: '✖ ', system: '· ' };

/**
 * Display rows (one per visual line) for entries. Thinking blocks are folded to one row unless
 * unfolded; long tool results show a preview plus a fold row.
 */
export function entriesToRows(entries: readonly LogEntry[], unfolded: ReadonlySet<number>, from = 0, out: LogRow[] = []): LogRow[] {
  for (let i = from; i < entries.length; i++) {
    const e = entries[i];
    const lines = e.text.split('\n');
    if (e.kind === 'thinking') {
      const open = unfolded.has(i);
      out.push({ key: `${i}:f`, entry: i, kind: 'thinking', text: `${open ? '▾' : '▸'} thinking (${lines.length} line${lines.length === 1 ? '' : 's'})`, fold: open ? 'expanded' : 'collapsed' });
      if (open) lines.forEach((l, j) => out.push({ key: `${i}:${j}`, entry: i, kind: 'thinking', text: `  ${l}` }));
      continue;
    }
    if (e.kind === 'tool_result' && lines.length > RESULT_PREVIEW_LINES) {
      const open = unfolded.has(i);
      const shown = open ? lines : lines.slice(0, RESULT_PREVIEW_LINES);
      shown.forEach((l, j) => out.push({ key: `${i}:${j}`, entry: i, kind: e.kind, text: `  ${l}` }));
      out.push({ key: `${i}:f`, entry: i, kind: e.kind, text: open ? '  ▴ show less' : `  ▸ ${lines.length - RESULT_PREVIEW_LINES} more lines`, fold: open ? 'expanded' : 'collapsed' });
      continue;
    }
    const indent = e.kind === 'tool_result' ? '  ' : '';
    lines.forEach((l, j) => {
      const head = j === 0 ? `${PREFIX[e.kind] ?? ''}${e.title && e.kind !== 'result' ? `${e.title}: ` : ''}` : e.kind === 'tool_use' ? '  ' : '';
      out.push({ key: `${i}:${j}`, entry: i, kind: e.kind, text: `${indent}${head}${l}` });
    });
  }
  return out;
}
