import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, parseRunInfo, RunInfo, serializeRunInfo, StorageError } from '@app/storage';
import { makeTempDir } from './helpers/temp';

const base: RunInfo = {
  version: 1,
  run_id: '20260223-2049190000-67952-1',
  project_id: 'p',
  task_id: 'task-20260223-204900-x',
  agent: 'claude',
  pid: 1,
  pgid: 1,
  start_time: new Date('2026-02-23T20:49:19.123Z'),
  end_time: new Date('2026-02-23T20:51:02.5Z'),
  exit_code: 0,
  status: 'completed',
  agent_version: '2.0.0',
};

describe('run-info criteria field (issue #33)', () => {
  it('round-trips the criteria record, quoting hostile text', () => {
    const info: RunInfo = {
      ...base,
      criteria: {
        passed: false,
        reason: 'criterion "npm test" failed: exit code 1',
        checked_at: new Date('2026-02-23T20:51:03.000Z'),
        results: [
          { command: 'true', exit_code: 0, passed: true, duration_ms: 3 },
          { command: 'npm test -- --grep "a: b" # x', exit_code: 1, passed: false, duration_ms: 120, output_tail: 'line1\n\tkey: value\n- item\n"q" \u2028 end' },
          { command: 'sleep 9', exit_code: -1, passed: false, timed_out: true, duration_ms: 1000, error: 'timed out after 1s' },
        ],
      },
    };
    const text = serializeRunInfo(info);
    expect(text).toContain('\ncriteria:\n    passed: false\n');
    expect(parseRunInfo(text)).toEqual(info);
  });

  it('an empty or malformed criteria block never reads as passed and never makes the record corrupt', () => {
    const plain = serializeRunInfo(base);
    expect(parseRunInfo(plain + 'criteria:\n    passed: true\n    results: []\n').criteria).toMatchObject({ passed: false, results: [] });
    expect(parseRunInfo(plain + 'criteria:\n    passed: true\n    results:\n        - command: "x"\n          exit_code: 1\n          passed: false\n').criteria?.passed).toBe(false);
    expect(parseRunInfo(plain + 'criteria:\n    passed: maybe\n').criteria).toBeUndefined();
    expect(parseRunInfo(plain + 'criteria: [1, 2]\n').status).toBe('completed');
    // other nested keys stay corrupt as before
    expect(() => parseRunInfo(plain + 'agent_name: [1]\n')).toThrow(StorageError);
  });
});

describe('config defaults.done_criteria_timeout', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir('criteria-config-');
    mkdirSync(join(tmp.dir, 'home'));
  });
  afterEach(() => tmp.cleanup());
  const load = (line: string) => {
    const path = join(tmp.dir, 'config.yaml');
    writeFileSync(path, `agents:\n  claude: {}\ndefaults:\n  timeout: 300\n${line}`);
    return loadConfig(path, { env: { HOME: join(tmp.dir, 'home') } });
  };

  it('is read when it is a duration between 1s and 24h, and refused otherwise', () => {
    expect(load('  done_criteria_timeout: 15m\n').defaults.done_criteria_timeout).toBe('15m');
    expect(load('').defaults.done_criteria_timeout).toBeUndefined();
    expect(() => load('  done_criteria_timeout: 0s\n')).toThrow(/defaults\.done_criteria_timeout.*between 1s and 24h/);
    expect(() => load('  done_criteria_timeout: soon\n')).toThrow(/defaults\.done_criteria_timeout/);
  });

  it('defaults.max_delegation_depth: 1..1000, 0 = the default', () => {
    expect(load('  max_delegation_depth: 4\n').defaults.max_delegation_depth).toBe(4);
    expect(load('  max_delegation_depth: 0\n').defaults.max_delegation_depth).toBeUndefined();
    expect(() => load('  max_delegation_depth: 1001\n')).toThrow(/defaults\.max_delegation_depth.*from 1 to 1000/);
    expect(() => load('  max_delegation_depth: -1\n')).toThrow(/defaults\.max_delegation_depth/);
  });

  it('defaults.max_children_per_run / max_runs_per_tree: 1..100000, 0 = no limit', () => {
    expect(load('  max_children_per_run: 3\n').defaults.max_children_per_run).toBe(3);
    expect(load('  max_runs_per_tree: 0\n').defaults.max_runs_per_tree).toBeUndefined();
    expect(() => load('  max_runs_per_tree: 100001\n')).toThrow(/defaults\.max_runs_per_tree.*from 1 to 100000/);
    expect(() => load('  max_children_per_run: -1\n')).toThrow(/defaults\.max_children_per_run/);
  });
});
