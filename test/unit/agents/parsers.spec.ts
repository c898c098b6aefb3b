import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseClaudeStream, parseCodexStream, parseGeminiStream, readFileLines } from '@app/agents';

const streams = join(__dirname, '..', '..', 'fixtures', 'agents', 'streams');
const fixture = (name: string) => readFileSync(join(streams, name), 'utf8');
const ndjson = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

describe('claude stream parser', () => {
  it('returns the result of the upstream sample', () => {
    expect(parseClaudeStream(fixture('claude-sample.jsonl'))).toBe('Implemented X and created DONE.');
  });

  it('lets the first successful result win and stops there', () => {
    const text = ndjson(
      { type: 'assistant', message: { content: [{ type: 'text', text: 'thinking aloud' }] } },
      { type: 'result', is_error: false, result: 'first answer' },
      { type: 'result', is_error: false, result: 'second answer' },
    );
    expect(parseClaudeStream(text)).toBe('first answer');
  });

  it('ignores error results and falls back to assistant text joined by newlines', () => {
    const text = ndjson(
      { type: 'assistant', message: { content: [{ type: 'text', text: 'Part one.' }, { type: 'tool_use', name: 'Bash' }] } },
      { type: 'user', message: { content: [{ type: 'tool_result', content: 'not text' }] } },
      { type: 'assistant', message: { content: [{ type: 'thinking', thinking: 'hidden' }, { type: 'text', text: ' Part two. ' }] } },
      { type: 'result', is_error: true, result: 'API Error: overloaded' },
    );
    expect(parseClaudeStream(text)).toBe('Part one.\n Part two. ');
  });

  it('skips blank, non-JSON and non-object lines', () => {
    const text = `\n   \nWarning: something\n[1,2]\n"str"\n${ndjson({ type: 'result', is_error: false, result: 'ok' })}`;
    expect(parseClaudeStream(text)).toBe('ok');
  });

  it('returns undefined when there is no text at all', () => {
    expect(parseClaudeStream(ndjson({ type: 'system', subtype: 'init' }, { type: 'result', is_error: false, result: '' }))).toBeUndefined();
    expect(parseClaudeStream('')).toBeUndefined();
  });

  it('keeps reading after a line longer than 1 MiB', () => {
    const huge = { type: 'user', message: { content: [{ type: 'tool_result', content: 'x'.repeat(3 * 1024 * 1024) }] } };
    const text = ndjson({ type: 'system' }, huge, { type: 'result', is_error: false, result: 'after the big line' });
    expect(parseClaudeStream(text)).toBe('after the big line');
  });
});

describe('codex stream parser', () => {
  it('returns the agent message of the upstream sample, ignoring reasoning and commands', () => {
    expect(parseCodexStream(fixture('codex-sample.jsonl'))).toBe('Implemented X and wrote DONE.');
  });

  it('counts cumulative updates of one item once, keeping the latest text', () => {
    const text = ndjson(
      { type: 'item.started', item: { id: 'item_3', type: 'agent_message', text: 'Hello' } },
      { type: 'item.updated', item: { id: 'item_3', type: 'agent_message', text: 'Hello wor' } },
      { type: 'item.updated', item: { id: 'item_3', type: 'agent_message', text: 'Hello world' } },
      { type: 'item.completed', item: { id: 'item_3', type: 'agent_message', text: 'Hello world' } },
    );
    expect(parseCodexStream(text)).toBe('Hello world');
  });

  it('joins separate messages with a newline and de-duplicates repeats without ids', () => {
    const text = ndjson(
      { type: 'item.completed', item: { id: 'a', type: 'agent_message', text: 'First message.' } },
      { type: 'item.completed', item: { id: 'b', type: 'agent_message', text: 'Second message.' } },
      { type: 'message', content: [{ type: 'output_text', text: 'Second message.' }] },
      { type: 'item.completed', item: { type: 'message', content: [{ text: 'Third' }, { text: 'part' }] } },
    );
    expect(parseCodexStream(text)).toBe('First message.\nSecond message.\nThird\npart');
  });

  it('keeps a short message that merely occurs inside an earlier one', () => {
    const text = ndjson(
      { type: 'item.completed', item: { id: 'a', type: 'agent_message', text: 'Tests are OK now, shipping.' } },
      { type: 'message', content: 'OK' },
    );
    expect(parseCodexStream(text)).toBe('Tests are OK now, shipping.\nOK');
  });

  it('extends cumulative top-level text instead of repeating it', () => {
    const text = ndjson({ type: 'message', message: 'Partial' }, { type: 'response.completed', output_text: 'Partial and complete' });
    expect(parseCodexStream(text)).toBe('Partial and complete');
  });

  it('returns undefined for streams without messages and for the old event format', () => {
    expect(parseCodexStream(ndjson({ id: '0', msg: { type: 'agent_message', message: 'old format' } }))).toBeUndefined();
    expect(parseCodexStream(ndjson({ type: 'turn.started' }, { type: 'item.completed', item: { id: 'r', type: 'reasoning', text: 'hmm' } }))).toBeUndefined();
  });
});

describe('gemini stream parser', () => {
  it('returns the assistant message of the upstream sample, ignoring the user echo', () => {
    expect(parseGeminiStream(fixture('gemini-sample.jsonl'))).toBe('Implemented X and created DONE.');
  });

  it('joins delta chunks without trimming them (D5)', () => {
    const text = ndjson(
      { type: 'message', role: 'assistant', content: 'Hello', delta: true },
      { type: 'message', role: 'assistant', content: ' world', delta: true },
      { type: 'message', role: 'assistant', content: '! ', delta: true },
      { type: 'message', role: 'assistant', content: 'Hello', delta: true },
    );
    expect(parseGeminiStream(text)).toBe('Hello world! Hello');
  });

  it('separates assistant turns split by tool calls with a newline', () => {
    const text = ndjson(
      { type: 'message', role: 'assistant', content: 'Reading the file.', delta: true },
      { type: 'tool_use', tool_name: 'read_file', tool_id: 't1' },
      { type: 'tool_result', tool_id: 't1', status: 'success', output: 'data' },
      { type: 'message', role: 'assistant', content: 'Done.', delta: true },
    );
    expect(parseGeminiStream(text)).toBe('Reading the file.\nDone.');
  });

  it('tolerates cumulative whole messages', () => {
    const text = ndjson(
      { type: 'message', role: 'assistant', content: 'Step one' },
      { type: 'message', role: 'assistant', content: 'Step one, step two' },
      { type: 'message', role: 'assistant', content: 'Step one, step two' },
    );
    expect(parseGeminiStream(text)).toBe('Step one, step two');
  });

  it('prefers a result event that carries a result string', () => {
    const text = ndjson({ type: 'message', role: 'assistant', content: 'draft', delta: true }, { type: 'result', status: 'success', result: ' final ' });
    expect(parseGeminiStream(text)).toBe('final');
  });

  it('reads nested assistant messages and skips other roles', () => {
    const text = ndjson(
      { type: 'message', message: { role: 'user', content: 'prompt text' } },
      { type: 'assistant', message: { role: 'assistant', content: [{ text: 'nested answer' }] } },
    );
    expect(parseGeminiStream(text)).toBe('nested answer');
  });

  it('returns undefined when only non-assistant events are present', () => {
    expect(parseGeminiStream(ndjson({ type: 'init' }, { type: 'message', role: 'user', content: 'hi' }, { type: 'result', status: 'success' }))).toBeUndefined();
  });
});

describe('readFileLines', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'agents-lines-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('returns every line whole, across chunk boundaries and multi-byte characters', () => {
    const big = 'é'.repeat(700_000); // 1.4 MB of 2-byte characters: crosses the 1 MiB chunk size mid-character
    const file = join(dir, 'stdout.txt');
    writeFileSync(file, `first\n${big}\n\nlast-without-newline`);
    expect([...readFileLines(file)]).toEqual(['first', big, '', 'last-without-newline']);
  });

  it('feeds a parser straight from a file', () => {
    const file = join(dir, 'stdout.txt');
    writeFileSync(file, fixture('claude-sample.jsonl'));
    expect(parseClaudeStream(readFileLines(file))).toBe('Implemented X and created DONE.');
  });
});
