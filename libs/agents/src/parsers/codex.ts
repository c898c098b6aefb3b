import { isRecord, linesOf, parseJsonObject, StreamInput, textOf } from './lines';

const TOP_LEVEL_TYPES = new Set(['result', 'response.completed', 'turn.completed', 'message']);
const TOP_LEVEL_KEYS = ['result', 'output_text', 'text', 'content', 'message'];
const TEXT_KEYS = ['text', 'content', 'result', 'message', 'output', 'output_text'];
const MESSAGE_ITEM_TYPES = new Set(['', 'agent_message', 'message']);

/**
 * Final text of `codex exec --json` output: the agent messages in order of appearance, joined by
 * newlines. Repeated versions of one item (`item.started`/`updated`/`completed`, possibly
 * cumulative) count once, with their latest text; reasoning, commands and other items are ignored.
 */
export function parseCodexStream(input: StreamInput): string | undefined {
  const segments: string[] = [];
  const segmentOfItem = new Map<string, number>();

  const addLoose = (text: string) => {
    const joined = segments.join('\n');
    // A repeat of a message already taken (e.g. turn.completed echoing the last item).
    if (segments.includes(text) || joined.startsWith(text) || joined.endsWith(text)) return;
    if (joined !== '' && text.startsWith(joined)) {
      segments.splice(0, segments.length, text);
      segmentOfItem.clear();
      return;
    }
    segments.push(text);
  };

  for (const line of linesOf(input)) {
    const event = parseJsonObject(line);
    if (!event) continue;
    if (typeof event.type === 'string' && TOP_LEVEL_TYPES.has(event.type)) {
      const text = firstText(event, TOP_LEVEL_KEYS);
      if (text !== '') addLoose(text);
    }
    if (!isRecord(event.item)) continue;
    const item = event.item;
    const itemType = typeof item.type === 'string' ? item.type.trim() : '';
    if (!MESSAGE_ITEM_TYPES.has(itemType)) continue;
    const text = firstText(item, ['text', 'output_text', 'content', 'message']);
    if (text === '') continue;
    const id = typeof item.id === 'string' && item.id !== '' ? item.id : undefined;
    if (id === undefined) {
      addLoose(text);
    } else if (segmentOfItem.has(id)) {
      segments[segmentOfItem.get(id)!] = text;
    } else {
      segmentOfItem.set(id, segments.length);
      segments.push(text);
    }
  }
  const result = segments.join('\n').trim();
  return result === '' ? undefined : result;
}

function firstText(obj: Record<string, unknown>, keys: readonly string[]): string {
  for (const key of keys) {
    const text = textOf(obj[key], TEXT_KEYS).trim();
    if (text !== '') return text;
  }
  return '';
}
