import { MAX_VALUE_CHARS, renderPrompt } from '@app/triggers';

describe('trigger prompt template', () => {
  it('inserts payload fields, nested values as JSON, missing as empty', () => {
    const payload = { ref: 'main', pr: { number: 7, labels: ['a'] } };
    expect(renderPrompt('ref={{payload.ref}} n={{ payload.pr.number }} l={{payload.pr.labels}} x=[{{payload.nope.deeper}}]', payload)).toBe('ref=main n=7 l=["a"] x=[]');
    expect(renderPrompt('all: {{payload}}', { a: 1 })).toBe('all: {"a":1}');
  });

  it('never expands a template inside a value and drops control characters', () => {
    expect(renderPrompt('{{payload.a}}', { a: '{{payload.b}}\u0007ok\nline', b: 'secret' })).toBe('{{payload.b}}ok\nline');
  });

  it('cuts a long value and leaves unknown placeholders alone', () => {
    const out = renderPrompt('{{payload.a}}|{{env.HOME}}', { a: 'x'.repeat(MAX_VALUE_CHARS + 50) });
    expect(out).toBe(`${'x'.repeat(MAX_VALUE_CHARS)}…|{{env.HOME}}`);
  });

  it('does not read inherited properties', () => {
    expect(renderPrompt('[{{payload.constructor}}]', {})).toBe('[]');
  });
});
