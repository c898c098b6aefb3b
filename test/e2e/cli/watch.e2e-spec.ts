import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { updateRunInfo } from '@app/storage';
import { screenOf } from '../../utils/terminal-screen';
import { P, RUN_AGENT, running, Sandbox, T1, T2, writeRun } from './inspect-helpers';

/** Collects a child's stdout; `until(text)` resolves once it contains `text` (or the child exits). */
function follow(child: ChildProcess) {
  let stdout = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const w of waiters.filter((x) => stdout.includes(x.text))) w.resolve();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const until = (text: string) => Promise.race([new Promise<void>((resolve) => (stdout.includes(text) ? resolve() : waiters.push({ text, resolve }))), exited]);
  return { stdout: () => stdout, until, exited };
}

describe('run-agent watch', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  it('exits 0 at once when every task is finished, with phases and durations', async () => {
    const start = new Date(Date.now() - 125_000);
    writeRun(sb.root, P, T1, '20260101-1200000000-1-1', { status: 'completed', start_time: start, end_time: new Date(start.getTime() + 65_000) });
    writeRun(sb.root, P, T2, '20260101-1200000000-2-1', { status: 'failed', exit_code: 1 });
    const r = await sb.run(['watch', '--root', sb.root, '--project', P, '--task', T1, '--task', T2]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `Watching 2 task(s) for project "${P}":`,
        '  phase counts: active=0 blocked=0 completed=1 failed=1 stopped=0 pending=0',
        `  ${T1.padEnd(45)} [completed] completed duration: 1m5s`,
        `  ${T2.padEnd(45)} [failed   ] failed    duration: 30s`,
        'All tasks complete.',
        '',
      ].join('\n'),
    );
  });

  it('--json prints one line per poll and follows a run until it completes', async () => {
    const infoPath = join(writeRun(sb.root, P, T1, '20260101-1200000000-1-1', running(sb.livePid())), 'run-info.yaml');
    const child = spawn(process.execPath, [RUN_AGENT, 'watch', '--root', sb.root, '--project', P, '--task', T1, '--json'], { env: sb.env() });
    let stdout = '';
    const firstPoll = new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes('\n')) resolve();
      }),
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await Promise.race([firstPoll, exited]);
    expect(stderr).toBe('');
    await updateRunInfo(infoPath, (i) => ({ ...i, status: 'completed', exit_code: 0, end_time: new Date() }));
    expect(await exited).toBe(0);
    const polls = stdout.trim().split('\n').map((l) => JSON.parse(l) as { tasks: { status: string; done: boolean; elapsed: number }[]; all_done: boolean });
    expect(polls[0].all_done).toBe(false);
    expect(polls[0].tasks[0]).toMatchObject({ task_id: T1, status: 'running', done: false });
    expect(polls[0].tasks[0].elapsed).toBeGreaterThan(50);
    expect(polls[polls.length - 1]).toMatchObject({ all_done: true, tasks: [{ task_id: T1, status: 'completed', done: true }] });
  });

  it('exits 1 with a timeout message when tasks are still running', async () => {
    writeRun(sb.root, P, T1, '20260101-1200000000-1-1', running(sb.livePid()));
    const r = await sb.run(['watch', '--root', sb.root, '--project', P, '--task', T1, '--timeout', '1s']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`  ${T1.padEnd(45)} [running  ] active    elapsed: 1m`);
    expect(r.stdout).toContain('Waiting for 1 active and 0 blocked task(s)... (timeout in ');
    expect(r.stderr).toBe('Error: timeout after 1s: not all tasks completed\n');
  });

  it('rejects a missing --task, a bad timeout and traversal ids', async () => {
    const noTask = await sb.run(['watch', '--root', sb.root, '--project', P]);
    expect([noTask.code, noTask.stderr]).toEqual([2, 'Error: at least one --task is required\n']);
    const badTimeout = await sb.run(['watch', '--root', sb.root, '--project', P, '--task', T1, '--timeout', 'later']);
    expect(badTimeout.code).toBe(2);
    const escape = await sb.run(['watch', '--root', sb.root, '--project', P, '--task', '../x']);
    expect(escape.code).toBe(2);
    expect(escape.stderr).toMatch(/^Error: invalid task ID/);
    expect(escape.stdout).toBe('');
  });

  it('on a pipe prints the first poll whole, then only the tasks whose status changed', async () => {
    const info1 = join(writeRun(sb.root, P, T1, '20260101-1200000000-1-1', running(sb.livePid())), 'run-info.yaml');
    const info2 = join(writeRun(sb.root, P, T2, '20260101-1200000000-2-1', running(sb.livePid())), 'run-info.yaml');
    const child = spawn(process.execPath, [RUN_AGENT, 'watch', '--root', sb.root, '--project', P, '--task', T1, '--task', T2], { env: sb.env() });
    const out = follow(child);
    await out.until('Waiting for 2 active');
    // a rewrite that changes nothing wakes the watch for a poll that prints nothing
    await updateRunInfo(info2, (i) => ({ ...i }));
    await updateRunInfo(info1, (i) => ({ ...i, status: 'completed', exit_code: 0, end_time: new Date() }));
    await out.until('Waiting for 1 active');
    await updateRunInfo(info2, (i) => ({ ...i, status: 'failed', exit_code: 1, end_time: new Date() }));
    expect(await out.exited).toBe(0);
    const lines = out.stdout().split('\n');
    expect(lines.filter((l) => l.includes('phase counts'))).toEqual([
      '  phase counts: active=2 blocked=0 completed=0 failed=0 stopped=0 pending=0',
      '  phase counts: active=1 blocked=0 completed=1 failed=0 stopped=0 pending=0',
      '  phase counts: active=0 blocked=0 completed=1 failed=1 stopped=0 pending=0',
    ]);
    expect(lines.filter((l) => l.includes(T1)).map((l) => l.replace(/: \S+$/, ''))).toEqual([
      `  ${T1.padEnd(45)} [running  ] active    elapsed`,
      `  ${T1.padEnd(45)} [completed] completed duration`,
    ]);
    expect(lines.filter((l) => l.includes(T2)).map((l) => l.replace(/: \S+$/, ''))).toEqual([
      `  ${T2.padEnd(45)} [running  ] active    elapsed`,
      `  ${T2.padEnd(45)} [failed   ] failed    duration`,
    ]);
    expect(lines.filter((l) => l.startsWith('    transition:'))).toEqual(['    transition: active -> completed', '    transition: active -> failed']);
    expect(lines.slice(-2)).toEqual(['All tasks complete.', '']);
  });

  it('on a terminal (a real pseudo-terminal) redraws one block in place until the run completes', async () => {
    const info = join(writeRun(sb.root, P, T1, '20260101-1200000000-1-1', running(sb.livePid())), 'run-info.yaml');
    const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
    const command = ['stty cols 200 rows 40;', 'exec', ...[process.execPath, RUN_AGENT, 'watch', '--root', sb.root, '--project', P, '--task', T1].map(quote)].join(' ');
    // util-linux script(1) runs the command on a new pseudo-terminal and copies what it shows to stdout
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: sb.env({ TERM: 'xterm', NO_COLOR: '1' }), stdio: ['pipe', 'pipe', 'pipe'] });
    const out = follow(child);
    await out.until('Waiting for 1 active');
    // a few redraws of the ticking clock, then the run completes
    await out.until('\u001b[1A');
    await updateRunInfo(info, (i) => ({ ...i, status: 'completed', exit_code: 0, end_time: new Date() }));
    expect(await out.exited).toBe(0);
    child.stdin!.end();
    expect(screenOf(out.stdout()).map((l) => l.replace(/(duration|elapsed): \S+$/, '$1'))).toEqual([
      `Watching 1 task(s) for project "${P}":`,
      `  ${T1}: active -> completed`,
      '  phase counts: active=0 blocked=0 completed=1 failed=0 stopped=0 pending=0',
      `  ${T1.padEnd(45)} [completed] completed duration`,
      'All tasks complete.',
    ]);
  });
});
