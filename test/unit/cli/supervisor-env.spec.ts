import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { jrunVariables } from '@app/agents';
import { clearPendingChild, writePendingMarker } from '@app/runner';
import { dropPerRunVariables, isPerRunVariable } from '../../../apps/cli/src/supervisor/per-run-env';
const fnv1a64 = require('../../../bin/fnv1a64.js') as (text: string) => string;
const client = require('../../../bin/task-client.js') as {
  isPerRunVariable(name: string): boolean;
  shardCount(env: NodeJS.ProcessEnv): number;
  shardOf(pid: number, shards: number): number;
};

describe('the task supervisor’s per-run variables', () => {
  const perRun = Object.keys(jrunVariables({ projectId: 'p', taskId: 't', runId: 'r', parentRunId: 'q', runsDir: '/r', messageBus: '/b', taskFolder: '/t', runFolder: '/f', conductorUrl: 'http://x' }));
  const shared = ['PATH', 'HOME', 'CONDUCTOR_CONFIG', 'CONDUCTOR_URL', 'CONDUCTOR_MAX_MESSAGE_BODY_BYTES', 'RUN_AGENT_SUPERVISOR', 'JRUNNER', 'TASK_FOLDERS'];

  it('are every variable a runner sets per run for its agent, but the conductor URL every run shares', () => {
    expect(perRun.filter((name) => !isPerRunVariable(name))).toEqual(['CONDUCTOR_URL']);
    expect(shared.filter(isPerRunVariable)).toEqual([]);
  });

  it('are the same for the client (which names the socket) and the supervisor (which drops them)', () => {
    for (const name of [...perRun, ...shared]) expect([name, client.isPerRunVariable(name)]).toEqual([name, isPerRunVariable(name)]);
  });

  it('are dropped from the supervisor’s environment, nothing else', () => {
    const env: NodeJS.ProcessEnv = { JRUN_ID: 'r', RUN_FOLDER: '/f', PATH: '/bin', CONDUCTOR_URL: 'http://x' };
    dropPerRunVariables(env);
    expect(env).toEqual({ PATH: '/bin', CONDUCTOR_URL: 'http://x' });
  });
});

describe('the name of a supervisor’s socket', () => {
  it('is FNV-1a with 64 bits (the published test vectors), over the UTF-8 bytes', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
    expect(fnv1a64('é')).not.toBe(fnv1a64('\u00e9'.normalize('NFD')));
  });

  it('names one of RUN_AGENT_SUPERVISOR_SHARDS supervisors (default one per core), a burst of clients spread evenly', () => {
    expect(client.shardCount({})).toBe(availableParallelism());
    expect(client.shardCount({ RUN_AGENT_SUPERVISOR_SHARDS: ' 3 ' })).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'two', '65']) expect(() => client.shardCount({ RUN_AGENT_SUPERVISOR_SHARDS: bad })).toThrow(/^RUN_AGENT_SUPERVISOR_SHARDS must be a whole number from 1 to 64/);
    // sixty clients started one after another: consecutive pids, or every other one
    for (const step of [1, 2]) {
      for (const shards of [2, 4]) {
        const counts = new Array<number>(shards).fill(0);
        for (let i = 0; i < 60; i++) counts[client.shardOf(31_000 + i * step, shards)]++;
        for (const n of counts) expect(Math.abs(n - 60 / shards)).toBeLessThanOrEqual(2);
      }
    }
    expect(client.shardOf(12345, 1)).toBe(0);
  });
});

describe('a pending-child marker written for another process (the supervisor’s client)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'pending-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names that process, and goes when cleared by its path', () => {
    const runFolder = join(dir, 'run-1');
    const path = writePendingMarker(['job', '--prompt', 'x'], { JRUN_RUN_FOLDER: runFolder, JRUN_ID: 'run-1' }, 4242);
    expect(path).toBe(join(runFolder, 'pending-children', '4242'));
    expect(readFileSync(path!, 'utf8')).toBe('4242\n');
    clearPendingChild(path);
    expect(existsSync(path!)).toBe(false);
  });

  it('is not written for a job whose parent is not the caller’s run, nor for --help', () => {
    const env = { JRUN_RUN_FOLDER: join(dir, 'run-1'), JRUN_ID: 'run-1' };
    expect(writePendingMarker(['job', '--parent-run-id', 'run-2'], env, 4242)).toBeUndefined();
    expect(writePendingMarker(['job', '--help'], env, 4242)).toBeUndefined();
    expect(writePendingMarker(['task'], env, 4242)).toBeUndefined();
  });
});
