import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLAUDE_PLACEHOLDER_OUTPUT,
  ensureOutputFile,
  errorSummaryForExit,
  extractOutput,
  isGeminiFlagRejection,
} from '@app/agents';

const ndjson = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

describe('extractOutput', () => {
  let run: string;
  const stdout = (text: string) => writeFileSync(join(run, 'agent-stdout.txt'), text);
  const stderr = (text: string) => writeFileSync(join(run, 'agent-stderr.txt'), text);
  const output = () => readFileSync(join(run, 'output.md'), 'utf8');

  beforeEach(() => (run = mkdtempSync(join(tmpdir(), 'agents-output-'))));
  afterEach(() => rmSync(run, { recursive: true, force: true }));

  it('keeps an output.md the agent wrote itself', () => {
    writeFileSync(join(run, 'output.md'), 'mine');
    stdout(ndjson({ type: 'result', is_error: false, result: 'parsed' }));
    expect(extractOutput('claude', run)).toEqual({ outcome: 'kept', geminiFlagRejected: false });
    expect(output()).toBe('mine');
  });

  it.each([
    ['claude', ndjson({ type: 'result', is_error: false, result: 'claude answer' }), 'claude answer'],
    ['codex', ndjson({ type: 'item.completed', item: { id: 'i', type: 'agent_message', text: 'codex answer' } }), 'codex answer'],
    ['gemini', ndjson({ type: 'message', role: 'assistant', content: 'gemini', delta: true }, { type: 'message', role: 'assistant', content: ' answer', delta: true }), 'gemini answer'],
  ])('writes the parsed %s text as is', (type, stream, expected) => {
    stdout(stream);
    expect(extractOutput(type, run).outcome).toBe('parsed');
    expect(output()).toBe(expected);
  });

  it('writes the placeholder when a claude stream has no text', () => {
    stdout('not json\n');
    expect(extractOutput('claude', run).outcome).toBe('placeholder');
    expect(output()).toBe(CLAUDE_PLACEHOLDER_OUTPUT);
  });

  it('leaves an unparseable codex stream to the stdout fallback', () => {
    stdout('{"type":"turn.started"}\n');
    expect(extractOutput('codex', run)).toEqual({ outcome: 'unparsed', geminiFlagRejected: false });
    expect(ensureOutputFile(run)).toBe('copied');
    expect(output()).toBe('{"type":"turn.started"}\n');
  });

  it('flags a gemini that rejected the stream-json flags', () => {
    stdout('');
    stderr('Unknown arguments: output-format, outputFormat\n');
    expect(extractOutput('gemini', run)).toEqual({ outcome: 'unparsed', geminiFlagRejected: true });
  });

  it('does not flag a gemini failure with an unrelated stderr', () => {
    stdout('plain text answer\n');
    stderr('quota exceeded\n');
    expect(extractOutput('gemini', run)).toEqual({ outcome: 'unparsed', geminiFlagRejected: false });
  });

  it('does not parse command agents: their stdout becomes output.md verbatim', () => {
    stdout('line 1\n{"type":"result","is_error":false,"result":"not parsed"}\n');
    expect(extractOutput('command', run).outcome).toBe('unparsed');
    expect(ensureOutputFile(run)).toBe('copied');
    expect(output()).toBe('line 1\n{"type":"result","is_error":false,"result":"not parsed"}\n');
  });

  it('handles a missing stdout file', () => {
    expect(extractOutput('codex', run).outcome).toBe('unparsed');
    expect(ensureOutputFile(run)).toBe('no-stdout');
    expect(extractOutput('claude', run).outcome).toBe('placeholder');
  });

  it('refuses an output.md that is a directory', () => {
    mkdirSync(join(run, 'output.md'));
    stdout('x');
    expect(() => ensureOutputFile(run)).toThrow('output.md is a directory');
  });

  it('leaves an existing output.md alone in the fallback', () => {
    writeFileSync(join(run, 'output.md'), 'kept');
    stdout('raw');
    expect(ensureOutputFile(run)).toBe('existing');
    expect(output()).toBe('kept');
  });
});

describe('isGeminiFlagRejection', () => {
  it.each(['Error: unknown flag: --output-format', 'UNRECOGNIZED OPTION', 'Invalid flag', 'stream-json not supported'])('detects %p', (text) => {
    expect(isGeminiFlagRejection(text)).toBe(true);
  });
  it('ignores other errors', () => expect(isGeminiFlagRejection('network unreachable')).toBe(false));
});

describe('errorSummaryForExit', () => {
  it.each([
    [1, 'agent reported failure'],
    [2, 'agent usage error'],
    [137, 'agent killed (OOM or signal)'],
    [143, 'agent terminated (SIGTERM)'],
    [-1, 'agent exited with code -1'],
    [42, 'agent exited with code 42'],
  ])('maps %i', (code, summary) => expect(errorSummaryForExit(code)).toBe(summary));

  it('says timed out for idle-killed runs', () => expect(errorSummaryForExit(137, true)).toBe('timed out'));
});
