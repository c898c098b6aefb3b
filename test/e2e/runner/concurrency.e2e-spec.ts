import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { cliEnv, PROJECT, RUN_AGENT, runInfos, SUITE_AGENTS, taskId, tempRoot } from './helpers';

function runCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUN_AGENT, ...args], { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** Largest number of [start, end) intervals that overlap at one instant. */
export function maxOverlap(intervals: [bigint, bigint][]): number {
  const points = intervals.flatMap(([s, e]) => [
    { t: s, d: 1 },
    { t: e, d: -1 },
  ]);
  points.sort((a, b) => (a.t === b.t ? a.d - b.d : a.t < b.t ? -1 : 1));
  let now = 0;
  let max = 0;
  for (const p of points) {
    now += p.d;
    max = Math.max(max, now);
  }
  return max;
}

// Spawns the built CLI: build first (`npx nest build cli`).
describe('D13: max_concurrent_runs holds across processes', () => {
  const tmp = tempRoot();
  afterAll(() => tmp.cleanup());

  it('6 jobs from 6 processes with a limit of 2: never more than 2 agents alive, all complete', async () => {
    const home = join(tmp.root, '..', 'home');
    const intervals = join(tmp.root, '..', 'intervals');
    mkdirSync(home, { recursive: true });
    mkdirSync(intervals, { recursive: true });
    const configPath = join(home, 'config.yaml');
    writeFileSync(
      configPath,
      [
        'agents:',
        '  recorder:',
        '    type: command',
        `    command: ${join(SUITE_AGENTS, 'record-interval')}`,
        'defaults:',
        '  agent: recorder',
        '  max_concurrent_runs: 2',
        '  timeout: 300',
        '',
      ].join('\n'),
    );
    const env = cliEnv(home, { INTERVAL_DIR: intervals, INTERVAL_SLEEP_S: '1.5' });
    const tasks = Array.from({ length: 6 }, () => taskId('slots'));
    const results = await Promise.all(
      tasks.map((task) =>
        runCli(['job', '--root', tmp.root, '--config', configPath, '--project', PROJECT, '--task', task, '--prompt', 'record'], env, home),
      ),
    );
    expect(results.map((r) => r.stderr)).toEqual(tasks.map(() => ''));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0]);
    const recorded = readdirSync(intervals).map((f) => {
      const [s, e] = readFileSync(join(intervals, f), 'utf8').trim().split(' ');
      return [BigInt(s), BigInt(e)] as [bigint, bigint];
    });
    expect(recorded).toHaveLength(6);
    expect(maxOverlap(recorded)).toBeLessThanOrEqual(2);
    expect(maxOverlap(recorded)).toBeGreaterThanOrEqual(1);
    const layout = new RunsLayout(tmp.root);
    for (const task of tasks) expect(runInfos(layout.taskDir(PROJECT, task)).map((i) => i.status)).toEqual(['completed']);
    // nobody is left waiting in the queue
    expect(readdirSync(join(tmp.root, '.conductor', 'queue'))).toEqual([]);
  }, 30_000);
});
