import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { cliEnv, PROJECT, runInfos, SUITE_AGENTS, taskId, tempRoot } from './helpers';
import { runCli } from '../../utils/cli';

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
    // Each agent waits until 2 are alive at once (the limit), then works 0.5 s.
    const env = cliEnv(home, { INTERVAL_DIR: intervals, INTERVAL_SLEEP_S: '0.5', INTERVAL_BARRIER: '2' });
    const tasks = Array.from({ length: 6 }, () => taskId('slots'));
    const results = await Promise.all(
      tasks.map((task) =>
        runCli(['job', '--root', tmp.root, '--config', configPath, '--project', PROJECT, '--task', task, '--prompt', 'record'], { env, cwd: home }),
      ),
    );
    expect(results.map((r) => r.stderr)).toEqual(tasks.map(() => ''));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0]);
    const recorded = readdirSync(intervals).filter((f) => !f.startsWith('.')).map((f) => {
      const [s, e] = readFileSync(join(intervals, f), 'utf8').trim().split(' ');
      return [BigInt(s), BigInt(e)] as [bigint, bigint];
    });
    expect(recorded).toHaveLength(6);
    // Exactly the limit: more would break it, fewer would mean the runs were serialised.
    expect(maxOverlap(recorded)).toBe(2);
    const layout = new RunsLayout(tmp.root);
    for (const task of tasks) expect(runInfos(layout.taskDir(PROJECT, task)).map((i) => i.status)).toEqual(['completed']);
    // nobody is left waiting in the queue
    expect(readdirSync(join(tmp.root, '.conductor', 'queue'))).toEqual([]);
  }, 180_000);
});
