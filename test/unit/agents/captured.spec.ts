import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseClaudeStream, parseCodexStream, parseGeminiStream } from '@app/agents';

// Real stdout of claude 2.1.197, codex-cli 0.169.0 and gemini 0.61.0, captured by
// test/real-agents (the CLIs run offline against a fake model server; one shell tool call each).
const captured = (name: string) => readFileSync(join(__dirname, '..', '..', 'fixtures', 'agents', 'captured', name), 'utf8');
const ANSWER = 'Implemented X.  Two spaces survive, and so does a trailing one';

describe('parsers on captured real CLI streams', () => {
  it('claude: the result event (claude itself trims it)', () => {
    const stream = captured('claude.jsonl');
    expect(stream).toContain('"type":"tool_use"');
    expect(stream).toContain('"type":"tool_result"');
    expect(parseClaudeStream(stream)).toBe(ANSWER);
  });

  it('codex: the agent message, ignoring the error item, the command and its output', () => {
    const stream = captured('codex.jsonl');
    expect(stream).toContain('"type":"command_execution"');
    expect(stream).toContain('"type":"error"');
    expect(parseCodexStream(stream)).toBe(ANSWER);
  });

  it('gemini: delta chunks joined with their spaces (D5), turns around the tool call on separate lines', () => {
    const stream = captured('gemini.jsonl');
    expect(stream).toContain('"content":"  Two","delta":true');
    expect(parseGeminiStream(stream)).toBe(`Reading the task first.\n${ANSWER}`);
  });
});
