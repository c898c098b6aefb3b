import { describe, expect, it } from 'vitest';
import { AgentLogModel, entriesToRows, parseAgentLine, RESULT_PREVIEW_LINES } from '../src/data/agentstream';

const claude = [
  '{"type":"system","subtype":"init","cwd":"/home/dev/proj","session_id":"9b","model":"claude-sonnet-4-5"}',
  '{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"Let me think\\nstep two"},{"type":"text","text":"Reading TASK.md first."}]}}',
  '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat TASK.md"}}]}}',
  '{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Implement X"}]}}',
  '{"type":"result","subtype":"success","is_error":false,"result":"Implemented X."}',
];

describe('parseAgentLine', () => {
  it('renders claude stream-json: text, tool calls, tool results, thinking, result', () => {
    const entries = claude.flatMap(parseAgentLine);
    expect(entries.map((e) => e.kind)).toEqual(['system', 'thinking', 'text', 'tool_use', 'tool_result', 'result']);
    expect(entries[0].text).toContain('claude-sonnet-4-5');
    expect(entries[3]).toMatchObject({ title: 'Bash', text: 'cat TASK.md' });
    expect(entries[4].text).toBe('Implement X');
    expect(entries[5].text).toBe('Implemented X.');
  });

  it('renders codex --json items', () => {
    const entries = [
      '{"type":"thread.started","thread_id":"th1"}',
      '{"type":"turn.started"}',
      '{"type":"item.completed","item":{"id":"i0","type":"reasoning","text":"**Reading**"}}',
      '{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null}}',
      '{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"a\\nb\\n","exit_code":0}}',
      '{"type":"item.completed","item":{"id":"i2","type":"command_execution","command":"false","aggregated_output":"","exit_code":1}}',
      '{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"Done."}}',
      '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}',
    ].flatMap(parseAgentLine);
    expect(entries.map((e) => e.kind)).toEqual(['system', 'thinking', 'tool_use', 'tool_result', 'error', 'text', 'system']);
    expect(entries[2].text).toBe('bash -lc ls');
    expect(entries[5].text).toBe('Done.');
    expect(entries[6].text).toContain('10 in / 2 out');
  });

  it('renders gemini stream-json and joins deltas without losing spaces', () => {
    const model = new AgentLogModel();
    model.append(
      [
        '{"type":"init","session_id":"s","model":"gemini-2.5-pro"}',
        '{"type":"message","role":"user","content":"prompt echo"}',
        '{"type":"tool_use","tool_name":"read_file","tool_id":"rf","parameters":{"absolute_path":"/x"}}',
        '{"type":"tool_result","tool_id":"rf","status":"error","output":"nope"}',
        '{"type":"message","role":"assistant","content":"Hello","delta":true}',
        '{"type":"message","role":"assistant","content":" world","delta":true}',
        '{"type":"result","status":"success","stats":{"total_tokens":12}}',
        '',
      ].join('\n'),
    );
    expect(model.entries.map((e) => e.kind)).toEqual(['system', 'tool_use', 'error', 'text', 'result']);
    expect(model.entries[3].text).toBe('Hello world');
    expect(model.entries[4].text).toBe('success · 12 tokens');
  });

  it('keeps plain text and malformed JSON as raw lines', () => {
    expect(parseAgentLine('hello world')).toEqual([{ kind: 'raw', text: 'hello world' }]);
    expect(parseAgentLine('{not json}')).toEqual([{ kind: 'raw', text: '{not json}' }]);
    expect(parseAgentLine('{"unrelated":1}')).toEqual([{ kind: 'raw', text: '{"unrelated":1}' }]);
  });
});

describe('AgentLogModel', () => {
  it('parses only complete lines across chunk boundaries', () => {
    const model = new AgentLogModel();
    model.append('line o');
    expect(model.entries).toEqual([]);
    expect(model.pending).toBe('line o');
    model.append('ne\r\nline two\npart');
    expect(model.entries.map((e) => e.text)).toEqual(['line one', 'line two']);
    model.flush();
    expect(model.entries.map((e) => e.text)).toEqual(['line one', 'line two', 'part']);
    const v = model.version;
    model.reset();
    expect(model.entries).toEqual([]);
    expect(model.version).toBeGreaterThan(v);
  });
});

describe('entriesToRows', () => {
  it('folds thinking blocks until unfolded', () => {
    const entries = claude.flatMap(parseAgentLine);
    const folded = entriesToRows(entries, new Set());
    const thinking = folded.filter((r) => r.kind === 'thinking');
    expect(thinking).toHaveLength(1);
    expect(thinking[0]).toMatchObject({ fold: 'collapsed', text: '▸ thinking (2 lines)' });
    const open = entriesToRows(entries, new Set([thinking[0].entry])).filter((r) => r.kind === 'thinking');
    expect(open.map((r) => r.text)).toEqual(['▾ thinking (2 lines)', '  Let me think', '  step two']);
    expect(folded.find((r) => r.kind === 'tool_use')?.text).toBe('⚙ Bash: cat TASK.md');
  });

  it('previews long tool results and expands them on demand', () => {
    const long = Array.from({ length: RESULT_PREVIEW_LINES + 4 }, (_, i) => `l${i}`).join('\n');
    const entries = [{ kind: 'tool_result' as const, text: long }];
    const rows = entriesToRows(entries, new Set());
    expect(rows).toHaveLength(RESULT_PREVIEW_LINES + 1);
    expect(rows[rows.length - 1]).toMatchObject({ fold: 'collapsed', text: '  ▸ 4 more lines' });
    expect(entriesToRows(entries, new Set([0]))).toHaveLength(RESULT_PREVIEW_LINES + 5);
  });
});
