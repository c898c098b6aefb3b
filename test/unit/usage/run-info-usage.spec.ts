import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunInfo, RunsLayout, serializeRunInfo, writeRunInfo, ZERO_TIME, type RunInfo } from '@app/storage';
import { checkBudget, taskTreeRuns, usageReport, validateTaskSettings, writeTaskSettings, readTaskSettings } from '@app/runner';

const base = (over: Partial<RunInfo>): RunInfo => ({
  version: 1,
  run_id: 'r1',
  project_id: 'p',
  task_id: 'task-20260101-000000-aaa',
  agent: 'claude',
  pid: 1,
  pgid: 1,
  start_time: new Date('2026-01-01T00:00:00Z'),
  end_time: new Date('2026-01-01T00:01:00Z'),
  exit_code: 0,
  status: 'completed',
  agent_version: '2.0.0',
  ...over,
});

describe('run-info added fields (usage, session_id, resume_at)', () => {
  it('round-trips and keeps the upstream fields first', () => {
    const info = base({ session_id: 'abc-1', resume_at: new Date('2026-01-01T01:00:00Z'), usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 2, cache_write_tokens: 1, cost_usd: 0.0123 } });
    const text = serializeRunInfo(info);
    expect(text).toMatch(/agent_version: 2\.0\.0\nsession_id: abc-1\nresume_at: 2026-01-01T01:00:00Z\nusage:\n {4}input_tokens: 10\n {4}output_tokens: 5\n {4}cache_read_tokens: 2\n {4}cache_write_tokens: 1\n {4}cost_usd: 0\.0123\n$/);
    expect(parseRunInfo(text)).toEqual(info);
  });

  it('a run without them writes the upstream layout unchanged', () => {
    expect(serializeRunInfo(base({}))).toMatch(/agent_version: 2\.0\.0\n$/);
    expect(parseRunInfo(serializeRunInfo(base({}))).usage).toBeUndefined();
  });
});

describe('usage aggregation and budgets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-unit-'));
  const root = join(dir, 'runs');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const T1 = 'task-20260101-000000-root';
  const T2 = 'task-20260101-000000-child';
  const put = (task: string, run: string, over: Partial<RunInfo>) => {
    const d = join(root, 'p', task, 'runs', run);
    mkdirSync(d, { recursive: true });
    writeRunInfo(join(d, 'run-info.yaml'), base({ run_id: run, task_id: task, ...over }));
  };
  put(T1, 'run-a', { usage: { input_tokens: 100, output_tokens: 10, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.1 } });
  put(T2, 'run-b', { parent_run_id: 'run-a', agent: 'codex', usage: { input_tokens: 200, output_tokens: 20, cache_read_tokens: 5, cache_write_tokens: 0 } });
  put(T2, 'run-c', { parent_run_id: 'run-b', agent: 'gemini', start_time: new Date('2026-02-01T00:00:00Z'), end_time: ZERO_TIME, status: 'running', usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 } });
  put(T2, 'run-d', {});

  it('a task tree follows the parent chain across tasks', () => {
    expect(taskTreeRuns(new RunsLayout(root), 'p', T1).map((r) => r.info.run_id).sort()).toEqual(['run-a', 'run-b', 'run-c']);
    const r = usageReport({ layout: new RunsLayout(root), projectId: 'p', taskId: T1 });
    expect(r.runs).toBe(1);
    expect(r.total_tokens).toBe(110);
    expect(r.tree).toEqual({ runs: 3, total_tokens: 332, usage: { input_tokens: 301, output_tokens: 31, cache_read_tokens: 5, cache_write_tokens: 0, cost_usd: 0.1 } });
    expect(r.by_agent.map((a) => [a.key, a.total_tokens])).toEqual([['claude', 110], ['codex', 220], ['gemini', 2]]);
  });

  it('project totals, --since', () => {
    expect(usageReport({ layout: new RunsLayout(root) }).total_tokens).toBe(332);
    expect(usageReport({ layout: new RunsLayout(root), projectId: 'p', since: new Date('2026-01-15T00:00:00Z') }).total_tokens).toBe(2);
  });

  it('checkBudget: tokens, cost, wall time', () => {
    const runs = taskTreeRuns(new RunsLayout(root), 'p', T1);
    expect(checkBudget(runs, { max_tokens: 332 }).exceeded).toBe(false);
    expect(checkBudget(runs, { max_tokens: 331 })).toMatchObject({ exceeded: true, reason: 'tokens 332 > max 331' });
    expect(checkBudget(runs, { max_cost_usd: 0.05 }).reason).toBe('cost $0.1 > max $0.05');
    expect(checkBudget(runs, { max_wall_time_ms: 60_000 }, Date.parse('2026-01-01T00:02:00Z')).reason).toBe('wall time 2m0s > max 1m0s');
  });

  it('settings are validated by one validator and stored in TASK-SETTINGS.yaml', () => {
    expect(() => validateTaskSettings({ max_tokens: '-3' })).toThrow('max tokens must be a positive integer');
    expect(() => validateTaskSettings({ max_cost_usd: 'abc' })).toThrow('max cost usd must be a positive number');
    expect(() => validateTaskSettings({ max_wall_time: 'soon' })).toThrow('max wall time must be a positive duration');
    expect(() => validateTaskSettings({ resume_mode: 'later' })).toThrow('resume mode must be continue or fresh');
    const taskDir = join(root, 'p', T1);
    writeTaskSettings(taskDir, validateTaskSettings({ max_tokens: '500', max_wall_time: '90m', resume_mode: 'continue' }));
    writeTaskSettings(taskDir, { max_cost_usd: 2 });
    expect(readTaskSettings(taskDir)).toEqual({ max_tokens: 500, max_cost_usd: 2, max_wall_time_ms: 5_400_000, resume_mode: 'continue' });
    writeFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'max_tokens: [oops\n');
    expect(readTaskSettings(taskDir)).toEqual({});
  });
});

describe('run-info fast path with the usage block', () => {
  it('reads the block we write without the full YAML parser, and odd blocks through it', () => {
    const info = base({ usage: { input_tokens: 1, output_tokens: 2, cache_read_tokens: 3, cache_write_tokens: 4, cost_usd: 1.5e-7 } });
    expect(parseRunInfo(serializeRunInfo(info)).usage).toEqual(info.usage);
    const quoted = serializeRunInfo(base({})) + 'usage:\n    input_tokens: "7"\n';
    expect(parseRunInfo(quoted).usage).toEqual({ input_tokens: 7, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 });
    const flow = serializeRunInfo(base({})) + 'usage: {input_tokens: 9, output_tokens: 1}\n';
    expect(parseRunInfo(flow).usage).toMatchObject({ input_tokens: 9, output_tokens: 1 });
  });
});
