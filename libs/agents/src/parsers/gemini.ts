import { isRecord, linesOf, parseJsonObject, StreamInput, textOf } from './lines';

const TEXT_KEYS = ['text', 'content', 'result', 'message'];
const TOOL_EVENTS = new Set(['tool_use', 'tool_result']);

/**
 * Final text of `gemini --output-format stream-json` output. A `result` event carrying a `result`
 * string wins; otherwise assistant messages are accumulated. Delta chunks (`"delta": true`) are
 * joined exactly as streamed, keeping their spaces (D5: "Hello" + " world" → "Hello world");
 * whole messages that repeat or extend the text so far only add what is new. Assistant turns
 * separated by tool calls are separated by a newline.
 */
export function parseGeminiStream(input: StreamInput): string | undefined {
  let text = '';
  let toolSinceText = false;
  for (const line of linesOf(input)) {
    const event = parseJsonObject(line);
    if (!event) continue;
    const type = event.type;
    if (type === 'result' && typeof event.result === 'string' && event.result.trim() !== '') {
      return event.result.trim();
    }
    if (typeof type === 'string' && TOOL_EVENTS.has(type)) {
      toolSinceText = true;
      continue;
    }
    const chunk = assistantText(event);
    if (chunk === '') continue;
    if (toolSinceText && text !== '' && !/\s$/.test(text)) text += '\n';
    toolSinceText = false;
    if (event.delta === true) {
      text += chunk;
    } else if (chunk.startsWith(text)) {
      text = chunk;
    } else if (!text.startsWith(chunk) && !text.endsWith(chunk)) {
      text += chunk;
    }
  }
  const result = text.trim();
  return result === '' ? undefined : result;
}

function assistantText(event: Record<string, unknown>): string {
  if (event.type === 'message') {
    if (!isAssistantRole(event.role)) return '';
    const direct = textOf(event.content, TEXT_KEYS);
    return direct.trim() !== '' ? direct : messageObjectText(event.message);
  }
  if (event.type === 'assistant') return messageObjectText(event.message);
  return '';
}

function messageObjectText(message: unknown): string {
  if (!isRecord(message) || !isAssistantRole(message.role)) return '';
  return textOf(message.content, TEXT_KEYS);
}

function isAssistantRole(role: unknown): boolean {
  return role === undefined || role === '' || role === 'assistant';
}
