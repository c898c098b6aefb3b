import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo, writeDone } from '@app/storage';
import { deadPid, P, running, Sandbox, T1, T2, T3, writeRun } from './inspect-helpers';

const DAY = 86_400_000;
const ago = (ms: number): Date => new Date(Date.now() - ms);

/** Lists every file and folder under `dir` (relative), to prove that a command changed nothing. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describe('run-agent gc', () => {
  let sb: Sandbox;
  const runs = (task: string): string[] => (existsSync(join(sb.root, P, task, 'runs')) ? readdirSync(join(sb.root, P, task, 'runs')).sort() : []);

  beforeEach(() => {
    sb = new Sandbox();
    writeRun(sb.root, P, T1, 'r1-old-completed', { status: 'completed', start_time: ago(10 * DAY), end_time: ago(10 * DAY) });
    writeRun(sb.root, P, T1, 'r2-old-failed', { status: 'failed', exit_code: 1, start_time: ago(9 * DAY), end_time: ago(9 * DAY) });
    writeRun(sb.root, P, T1, 'r3-recent-completed', { status: 'completed', start_time: ago(DAY), end_time: ago(DAY) });
    writeRun(sb.root, P, T1, 'r4-old-running-alive', running(sb.livePid(), 10 * DAY));
    writeRun(sb.root, P, T1, 'r5-old-running-dead', running(deadPid(), 10 * DAY));
    mkdirSync(join(sb.root, P, T1, 'runs', 'r6-orphan'));
    writeFileSync(join(sb.root, P, T1, 'runs', 'r1-old-completed', 'agent-stdout.txt'), 'x'.repeat(200_000));
  });
  afterEach(() => sb.cleanup());

  it('--dry-run lists what would go and changes nothing', async () => {
    const before = tree(sb.root);
    const r = await sb.run(['gc', '--root', sb.root, '--dry-run']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\[dry-run\] would delete .*\/r1-old-completed \(status=completed, started=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d, size=0\.2 MB\)$/);
    expect(lines[1]).toContain('/r2-old-failed (status=failed,');
    expect(lines[2]).toContain('/r5-old-running-dead (status=failed (stale running),');
    expect(lines[3]).toBe('Would delete 3 runs, freed 0.2 MB');
    expect(r.stderr).toBe('warning: skipping orphaned run dir r6-orphan (no run-info.yaml)\n');
    expect(tree(sb.root)).toEqual(before);
    expect(readRunInfo(join(sb.root, P, T1, 'runs', 'r5-old-running-dead', 'run-info.yaml')).status).toBe('running');
  });

  it('--json reports the same plan as data', async () => {
    const r = await sb.run(['gc', '--root', sb.root, '--dry-run', '--json', '--older-than', '48h']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { dry_run: boolean; deleted_runs: { run_id: string; stale: boolean }[]; freed_bytes: number; older_than: string };
    expect(report.dry_run).toBe(true);
    expect(report.older_than).toBe('48h0m0s');
    expect(report.deleted_runs.map((d) => [d.run_id, d.stale])).toEqual([
      ['r1-old-completed', false],
      ['r2-old-failed', false],
      ['r5-old-running-dead', true],
    ]);
    expect(report.freed_bytes).toBeGreaterThan(200_000);
  });

  it('deletes old finished runs, collects dead "running" runs, keeps live and recent ones', async () => {
    const r = await sb.run(['gc', '--root', sb.root]);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').pop()).toBe('Deleted 3 runs, freed 0.2 MB');
    expect(runs(T1)).toEqual(['r3-recent-completed', 'r4-old-running-alive', 'r6-orphan']);
  });

  it('--keep-failed keeps failed runs and records the dead run as failed', async () => {
    const r = await sb.run(['gc', '--root', sb.root, '--keep-failed', '--project', P]);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').pop()).toBe('Deleted 1 runs, freed 0.2 MB');
    expect(runs(T1)).toEqual(['r2-old-failed', 'r3-recent-completed', 'r4-old-running-alive', 'r5-old-running-dead', 'r6-orphan']);
    expect(readRunInfo(join(sb.root, P, T1, 'runs', 'r5-old-running-dead', 'run-info.yaml')).status).toBe('failed');
  });

  it('--rotate-bus archives only buses above --bus-max-size', async () => {
    const big = join(sb.root, P, T1, 'TASK-MESSAGE-BUS.md');
    const small = join(sb.root, P, 'PROJECT-MESSAGE-BUS.md');
    writeFileSync(big, 'b'.repeat(2048));
    writeFileSync(small, 's'.repeat(1024));
    const dry = await sb.run(['gc', '--root', sb.root, '--rotate-bus', '--bus-max-size', '1kb', '--older-than', '1000h', '--dry-run']);
    expect(dry.stdout).toBe('[dry-run] would rotate TASK-MESSAGE-BUS.md (0.0 MB → archived)\nWould delete 0 runs, freed 0.0 MB\nWould rotate 1 message bus file(s)\n');
    expect(existsSync(big)).toBe(true);
    const r = await sb.run(['gc', '--root', sb.root, '--rotate-bus', '--bus-max-size', '1KB', '--older-than', '1000h']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Rotated 1 message bus file(s)\n');
    expect(existsSync(big)).toBe(false);
    expect(existsSync(small)).toBe(true);
    const archived = readdirSync(join(sb.root, P, T1)).filter((n) => /^TASK-MESSAGE-BUS\.md\.\d{8}-\d{6}\.archived$/.test(n));
    expect(archived).toHaveLength(1);
  });

  it('--delete-done-tasks removes old DONE tasks whose runs are all gone', async () => {
    writeRun(sb.root, P, T2, 'r1', { start_time: ago(10 * DAY), end_time: ago(10 * DAY) });
    writeDone(join(sb.root, P, T2));
    mkdirSync(join(sb.root, P, T3));
    writeDone(join(sb.root, P, T3)); // DONE but its folder is new: kept
    utimesSync(join(sb.root, P, T2), ago(10 * DAY), ago(10 * DAY));
    const dry = await sb.run(['gc', '--root', sb.root, '--delete-done-tasks', '--dry-run']);
    expect(dry.stdout).toContain(`[dry-run] would delete task dir ${T2} (DONE + empty)\n`);
    expect(dry.stdout).toContain('Would delete 1 task directories (DONE + empty runs)\n');
    expect(existsSync(join(sb.root, P, T2))).toBe(true);
    const r = await sb.run(['gc', '--root', sb.root, '--delete-done-tasks']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`deleting task dir ${T2} (DONE + empty)\n`);
    expect(existsSync(join(sb.root, P, T2))).toBe(false);
    expect(existsSync(join(sb.root, P, T3))).toBe(true);
    expect(existsSync(join(sb.root, P, T1))).toBe(true);
  });

  it('rejects bad flags and ids in one line, deleting nothing', async () => {
    const before = tree(sb.root);
    for (const [args, code, message] of [
      [['--older-than', 'a week'], 2, /^Error: invalid --older-than "a week"/],
      [['--bus-max-size', '-5MB'], 2, /^Error: invalid --bus-max-size "-5MB": size must be non-negative\n$/],
      [['--bus-max-size', 'big'], 2, /^Error: invalid --bus-max-size "big"/],
      [['--project', '../..'], 2, /^Error: invalid project ID/],
      [['--project', 'absent'], 2, /^Error: unknown project "absent" in runs root /],
    ] as const) {
      const r = await sb.run(['gc', '--root', sb.root, '--older-than', '1s', ...args]);
      expect(r.code).toBe(code);
      expect(r.stderr.split('\n')).toHaveLength(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
    expect(tree(sb.root)).toEqual(before);
  });
});
