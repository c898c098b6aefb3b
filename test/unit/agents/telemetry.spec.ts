import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStreamTelemetry, rateLimitFromText, resetFromText, withResumeArgs } from '@app/agents';
import { envWithFakeAgents, fakeAgentsBinDir } from '../../utils/fake-agents';

const captured = (name: string) => readFileSync(join(__dirname, '..', '..', 'fixtures', 'agents', 'captured', name), 'utf8');

function fake(kind: string, env: Record<string, string>, args: string[]): string {
  return execFileSync(join(fakeAgentsBinDir(), kind), args, { input: 'do it', env: { ...envWithFakeAgents(), FAKE_AGENT_STRICT_ARGS: '0', ...env } }).toString();
}

describe('stream telemetry on captured real CLI streams', () => {
  it('claude: the result event usage and cost, the session id', () => {
    expect(parseStreamTelemetry('claude', captured('claude.jsonl'))).toEqual({
      session_id: '7496e272-4a96-441e-90d7-cede93d26cfb',
      usage: { input_tokens: 24, output_tokens: 27, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.000795 },
    });
  });

  it('codex: turn.completed usage and the thread id', () => {
    expect(parseStreamTelemetry('codex', captured('codex.jsonl'))).toEqual({
      session_id: '01a2008a-f05a-7753-8482-fe72a7cfd58e',
      usage: { input_tokens: 24, output_tokens: 16, cache_read_tokens: 0, cache_write_tokens: 0 },
    });
  });

  it('gemini: result stats and the init session id', () => {
    expect(parseStreamTelemetry('gemini', captured('gemini.jsonl'))).toEqual({
      session_id: 'ac1bd0ea-19e1-404b-aa1f-1490738954c1',
      usage: { input_tokens: 36, output_tokens: 23, cache_read_tokens: 0, cache_write_tokens: 0 },
    });
  });

  it('command and REST agents report nothing from stdout', () => {
    expect(parseStreamTelemetry('command', 'hello\n')).toEqual({});
    expect(parseStreamTelemetry('xai', captured('claude.jsonl'))).toEqual({});
  });
});

describe('stream telemetry on the fake CLIs (real formats, scripted values)', () => {
  it.each(['claude', 'codex', 'gemini'])('%s: FAKE_AGENT_USAGE and FAKE_AGENT_SESSION_ID come back', (kind) => {
    const out = fake(kind, { FAKE_AGENT_USAGE: '100,20,7,3,0.5', FAKE_AGENT_SESSION_ID: 'sess-1' }, []);
    const t = parseStreamTelemetry(kind, out);
    expect(t.session_id).toBe('sess-1');
    expect(t.usage).toMatchObject({ input_tokens: 100, output_tokens: 20, cache_read_tokens: 7 });
    if (kind === 'claude') expect(t.usage).toEqual({ input_tokens: 100, output_tokens: 20, cache_read_tokens: 7, cache_write_tokens: 3, cost_usd: 0.5 });
    expect(t.rate_limited_until).toBeUndefined();
  });

  it.each(['claude', 'codex', 'gemini'])('%s: a rate-limit signal gives its reset time', (kind) => {
    const before = Date.now();
    let out = '';
    try {
      fake(kind, { FAKE_AGENT_RATE_LIMIT_RESET_S: '30' }, []);
    } catch (err) {
      out = (err as { stdout: Buffer }).stdout.toString();
    }
    const t = parseStreamTelemetry(kind, out);
    expect(t.rate_limited_until).toBeDefined();
    const ahead = t.rate_limited_until!.getTime() - before;
    expect(ahead).toBeGreaterThan(28_000);
    expect(ahead).toBeLessThan(33_000);
  });

  it('a claude rate_limit_event that is only a warning does not hold the run', () => {
    const line = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'allowed_warning', resetsAt: 1774447200 } });
    expect(parseStreamTelemetry('claude', line).rate_limited_until).toBeUndefined();
    const rejected = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1774447200 } });
    expect(parseStreamTelemetry('claude', rejected).rate_limited_until).toEqual(new Date(1774447200_000));
  });
});

describe('rate-limit texts and resume arguments', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  it('reads "try again in" durations, defaults to a minute', () => {
    expect(resetFromText('429 Too Many Requests; try again in 20s', now)).toEqual(new Date('2026-01-01T00:00:20Z'));
    expect(resetFromText('quota exceeded, retry after 2 minutes', now)).toEqual(new Date('2026-01-01T00:02:00Z'));
    expect(resetFromText('RESOURCE_EXHAUSTED', now)).toEqual(new Date('2026-01-01T00:01:00Z'));
    expect(rateLimitFromText('all fine\nno problem', now)).toBeUndefined();
    expect(rateLimitFromText('error: 429 Too Many Requests', now)).toEqual(new Date('2026-01-01T00:01:00Z'));
  });

  it('continues a session per CLI', () => {
    expect(withResumeArgs('claude', ['-p', '--verbose'], 'abc')).toEqual(['-p', '--verbose', '--resume', 'abc']);
    expect(withResumeArgs('gemini', ['--output-format', 'stream-json'], 'abc')).toEqual(['--output-format', 'stream-json', '--resume', 'abc']);
    expect(withResumeArgs('codex', ['exec', '--json', '-'], 'abc')).toEqual(['exec', '--json', 'resume', 'abc', '-']);
    expect(withResumeArgs('command', ['x'], 'abc')).toEqual(['x']);
    expect(withResumeArgs('claude', ['-p'], undefined)).toEqual(['-p']);
  });
});
