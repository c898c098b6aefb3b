import { isRecord, linesOf, parseJsonObject, StreamInput } from './lines';

/**
 * Final text of `claude -p --output-format stream-json --verbose` output: the first successful
 * non-empty `result` event wins; otherwise the assistant text blocks joined by newlines;
 * undefined when there is neither.
 */
export function parseClaudeStream(input: StreamInput): string | undefined {
  const texts: string[] = [];
  for (const line of linesOf(input)) {
    // Cheap pre-filter: only result and assistant events matter, and most bytes are tool output.
    if (!line.includes('"result"') && !line.includes('"assistant"')) continue;
    const event = parseJsonObject(line);
    if (!event) continue;
    if (event.type === 'result') {
      if (event.is_error !== true && typeof event.result === 'string' && event.result !== '') return event.result;
    } else if (event.type === 'assistant' && isRecord(event.message) && Array.isArray(event.message.content)) {
      for (const block of event.message.content) {
        if (isRecord(block) && block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          texts.push(block.text);
        }
      }
    }
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}
