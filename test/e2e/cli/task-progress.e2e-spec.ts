// `run-agent task` narrates its Ralph loop (issue #13 item 6): on a real terminal (a PTY from
// util-linux `script`) colour and a live status line; NO_COLOR keeps the status line but no colour;
// a pipe gets plain timestamped lines.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, PROJECT, RUN_AGENT, taskId, tempRoot } from '../runner/helpers';

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

interface Outcome {
  code: number | null;
  output: string;
}

/** Runs the CLI with a PTY as its stdout/stderr (`script -q -e -c … /dev/null`). */
function runInPty(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Outcome> {
  const command = [process.execPath, RUN_AGENT, ...args].map(shellQuote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...env, TERM: 'xterm-256color' }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/* eslint-disable no-control-regex -- the escape sequences are what these tests check */
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

describe('run-agent task progress (built CLI)', () => {
  const tmp = tempRoot();
  const home = join(tmp.root, '..', 'home');
  mkdirSync(home, { recursive: true });
  afterAll(() => tmp.cleanup());

  // a failing first attempt, then DONE on the second: exits, a restart and DONE are all narrated
  const loop = (task: string) => ['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'x', '--agent', 'claude', '--restart-delay', '200ms'];
  const agentEnv = (counter: string) => ({ FAKE_AGENT_COUNTER_FILE: join(home, counter), FAKE_AGENT_EXIT_SEQUENCE: '3,0', FAKE_AGENT_DONE_ON_ATTEMPT: '2', FAKE_AGENT_SLEEP_MS: '300' });

  it('on a terminal: coloured event lines and a live status line', async () => {
    const task = taskId('ptyprog');
    const res = await runInPty(loop(task), cliEnv(home, agentEnv('c1')), home);
    expect(res.code).toBe(0);
    expect(res.output).toMatch(/\x1b\[3\dm/); // colour
    expect(res.output).toMatch(/\x1b\[2K/); // the status line is erased and redrawn in place
    const text = stripAnsi(res.output);
    expect(text).toMatch(new RegExp(`${task} · attempt 1 · running`));
    expect(text).toMatch(/▶ attempt 1: run \S+ started with agent claude\n/);
    expect(text).toMatch(/! attempt 1: run \S+ exited with code 3; no DONE yet, restarting in 200ms\n/);
    expect(text).toMatch(/▶ attempt 2: run \S+ started with agent claude\n/);
    expect(text).toMatch(/✓ attempt 2: run \S+ exited with code 0; DONE written\n/);
    expect(text).toMatch(/✓ DONE: task completed/);
  });

  it('NO_COLOR on a terminal: the same events without colour', async () => {
    const res = await runInPty(loop(taskId('nocolor')), cliEnv(home, { ...agentEnv('c2'), NO_COLOR: '1' }), home);
    expect(res.code).toBe(0);
    expect(res.output).not.toMatch(/\x1b\[3\dm/);
    expect(stripAnsi(res.output)).toMatch(/✓ DONE: task completed/);
  });

  it('not a terminal: plain timestamped lines, no escape sequences', async () => {
    const task = taskId('pipeprog');
    const child = spawnSync(process.execPath, [RUN_AGENT, ...loop(task)], { env: cliEnv(home, agentEnv('c3')), cwd: home, encoding: 'utf8' });
    expect(child.status).toBe(0);
    expect(child.stderr).not.toMatch(/\x1b/);
    const lines = child.stderr.trimEnd().split('\n');
    expect(lines.every((l) => /^\[\d\d:\d\d:\d\d\] /.test(l))).toBe(true);
    expect(lines.map((l) => l.slice(11).replace(/run \S+/, 'run R'))).toEqual(
      expect.arrayContaining([
        'attempt 1: run R started with agent claude',
        'attempt 1: run R exited with code 3; no DONE yet, restarting in 200ms',
        'attempt 2: run R started with agent claude',
        'attempt 2: run R exited with code 0; DONE written',
        'DONE: task completed (DONE marker present, no active children)',
      ]),
    );
  });
});
