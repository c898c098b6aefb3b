import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo } from '@app/storage';
import { deadPid, P, RUN_AGENT, running, Sandbox, T1, T2, writeRun } from './inspect-helpers';

const OLD = '20260101-1200000000-10-1';
const NEW = '20260101-1300000000-10-1';

describe('run-agent output', () => {
  let sb: Sandbox;
  let newDir: string;
  const base = (): string[] => ['--root', sb.root, '--project', P, '--task', T1];

  beforeEach(() => {
    sb = new Sandbox();
    const oldDir = writeRun(sb.root, P, T1, OLD);
    writeFileSync(join(oldDir, 'agent-stdout.txt'), 'old stdout\n');
    newDir = writeRun(sb.root, P, T1, NEW);
    writeFileSync(join(newDir, 'output.md'), 'answer line 1\r\nanswer line 2\nanswer line 3');
    writeFileSync(join(newDir, 'agent-stdout.txt'), 'raw stdout\n');
    writeFileSync(join(newDir, 'agent-stderr.txt'), 'warn 1\nwarn 2\n');
    writeFileSync(join(newDir, 'prompt.md'), '# prompt\n');
  });
  afterEach(() => sb.cleanup());

  it('prints each --file of the newest run, line by line', async () => {
    expect((await sb.run(['output', ...base()])).stdout).toBe('answer line 1\nanswer line 2\nanswer line 3\n');
    expect((await sb.run(['output', ...base(), '--file', 'STDOUT'])).stdout).toBe('raw stdout\n');
    expect((await sb.run(['output', ...base(), '--file', 'stderr'])).stdout).toBe('warn 1\nwarn 2\n');
    expect((await sb.run(['output', ...base(), '--file', 'prompt'])).stdout).toBe('# prompt\n');
    expect((await sb.run(['output', ...base(), '--tail', '2'])).stdout).toBe('answer line 2\nanswer line 3\n');
  });

  it('selects a run with --run or --run-dir and falls back to agent-stdout.txt', async () => {
    expect((await sb.run(['output', ...base(), '--run', OLD])).stdout).toBe('old stdout\n');
    expect((await sb.run(['output', '--run-dir', newDir, '--file', 'stderr', '--tail', '1'])).stdout).toBe('warn 2\n');
    const missingFile = await sb.run(['output', ...base(), '--run', OLD, '--file', 'prompt']);
    expect([missingFile.code, missingFile.stderr]).toEqual([1, `Error: file not found: ${join(sb.root, P, T1, 'runs', OLD, 'prompt.md')}\n`]);
  });

  it('infers project and task from JRUN_TASK_FOLDER', async () => {
    const r = await sb.run(['output', '--root', sb.root], { env: { JRUN_TASK_FOLDER: join(sb.root, P, T1) } });
    expect([r.code, r.stdout]).toEqual([0, 'answer line 1\nanswer line 2\nanswer line 3\n']);
  });

  it('reports bad input in one line without touching files', async () => {
    const unknown = await sb.run(['output', ...base(), '--file', 'logs']);
    expect([unknown.code, unknown.stderr]).toEqual([2, 'Error: unknown --file value "logs": must be output, stdout, stderr, or prompt\n']);
    const noTask = await sb.run(['output', '--root', sb.root, '--project', P]);
    expect([noTask.code, noTask.stderr]).toEqual([2, 'Error: --task is required when --run-dir is not specified\n']);
    const noRun = await sb.run(['output', ...base(), '--run', '20990101-0000000000-1-1']);
    expect([noRun.code, noRun.stderr]).toEqual([2, `Error: unknown run "20990101-0000000000-1-1" of task "${T1}"\n`]);
    const noRuns = await sb.run(['output', '--root', sb.root, '--project', P, '--task', T2]);
    expect([noRuns.code, noRuns.stderr]).toEqual([2, `Error: unknown task "${T2}" in project "${P}"\n`]);
    for (const args of [['--run', '../../x'], ['--run', '*']]) {
      const r = await sb.run(['output', ...base(), ...args]);
      expect(r.code).toBe(2); // #12: invalid input exits 2 in every command
      expect(r.stderr).toMatch(/^Error: invalid run ID/);
    }
    const taskEscape = await sb.run(['output', '--root', sb.root, '--project', P, '--task', '../..']);
    expect([taskEscape.code, taskEscape.stdout]).toEqual([2, '']);
    const badTail = await sb.run(['output', ...base(), '--tail', '-3']);
    expect(badTail.code).toBe(2);
  });

  it('--follow on a finished run prints the whole file and exits', async () => {
    const r = await sb.run(['output', ...base(), '--follow', '--tail', '1']);
    expect([r.code, r.stdout]).toEqual([0, 'answer line 1\nanswer line 2\nanswer line 3\n']);
  });

  it('--follow streams new bytes from a live writer and ends when the run completes', async () => {
    const runDir = join(sb.root, P, T2, 'runs', NEW);
    mkdirSync(runDir, { recursive: true });
    const stdoutPath = join(runDir, 'agent-stdout.txt');
    writeFileSync(stdoutPath, 'line 0\n');
    const go = join(sb.dir, 'go');
    const writer = join(sb.dir, 'writer.sh');
    writeFileSync(
      writer,
      [
        '#!/bin/sh',
        `while [ ! -e "${go}" ]; do sleep 0.02; done`,
        'i=1',
        `while [ $i -le 20 ]; do printf 'line %s\\n' $i >> "${stdoutPath}"; sleep 0.02; i=$((i+1)); done`,
        // The run ends while its process stays alive: only the status change can stop the follower.
        `sed -i 's/^status: running$/status: completed/' "${join(runDir, 'run-info.yaml')}"`,
        'exec sleep 300',
      ].join('\n'),
    );
    chmodSync(writer, 0o755);
    const pid = sb.spawnLive(writer).pid as number;
    writeRun(sb.root, P, T2, NEW, running(pid));

    const follower = spawn(process.execPath, [RUN_AGENT, 'output', '--root', sb.root, '--project', P, '--task', T2, '-f'], { env: sb.env() });
    let out = '';
    follower.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('line 0') && !existsSync(go)) writeFileSync(go, '');
    });
    const code = await new Promise<number | null>((resolve) => follower.on('close', resolve));
    expect(code).toBe(0);
    expect(out).toBe(Array.from({ length: 21 }, (_, i) => `line ${i}\n`).join(''));
    expect(readRunInfo(join(runDir, 'run-info.yaml')).status).toBe('completed');
  });

  it('--follow ends when a "running" run turns out to be dead', async () => {
    const runDir = writeRun(sb.root, P, T2, NEW, running(deadPid()));
    writeFileSync(join(runDir, 'agent-stderr.txt'), 'last words\n');
    const r = await sb.run(['output', '--root', sb.root, '--project', P, '--task', T2, '--follow', '--file', 'stderr']);
    expect([r.code, r.stdout]).toEqual([0, 'last words\n']);
    expect(readRunInfo(join(runDir, 'run-info.yaml')).status).toBe('failed');
  });

  it('--follow stops cleanly on SIGTERM', async () => {
    const runDir = writeRun(sb.root, P, T2, NEW, running(sb.livePid()));
    writeFileSync(join(runDir, 'agent-stdout.txt'), 'partial\n');
    const follower = spawn(process.execPath, [RUN_AGENT, 'output', '--root', sb.root, '--project', P, '--task', T2, '--follow'], { env: sb.env() });
    let out = '';
    follower.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('partial')) follower.kill('SIGTERM');
    });
    const code = await new Promise<number | null>((resolve) => follower.on('close', resolve));
    expect([code, out]).toEqual([0, 'partial\n\n']);
  });
});

describe('run-agent output synthesize', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  it('joins outputs of several runs and notes runs without output', async () => {
    const a = writeRun(sb.root, P, T1, OLD);
    writeFileSync(join(a, 'output.md'), '\n  result A  \n');
    const b = writeRun(sb.root, P, T1, NEW);
    writeFileSync(join(b, 'agent-stdout.txt'), 'result B\n');
    const c = join(sb.dir, 'elsewhere');
    mkdirSync(c);
    const r = await sb.run(['output', 'synthesize', '--root', sb.root, '--project', P, '--task', T1, '--runs', `${OLD}, ${b},${c}`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `## run: ${OLD}\n\nsource: ${join(a, 'output.md')}\n\nresult A\n\n---\n\n` +
        `## run: ${b}\n\nsource: ${join(b, 'agent-stdout.txt')}\n\nresult B\n\n---\n\n` +
        `## run: ${c}\n\n> WARNING: no output found for this run (path: ${c})\n\n` +
        '> 1 run(s) had no output artifact\n',
    );
    const outFile = join(sb.dir, 'synth.md');
    const toFile = await sb.run(['output', 'synthesize', '--root', sb.root, '--project', P, '--task', T1, '--runs', NEW, '--out', outFile]);
    expect([toFile.code, toFile.stdout]).toEqual([0, '']);
    expect(readFileSync(outFile, 'utf8')).toContain('result B');
  });

  it('--strict fails on a missing output; bad run ids and missing --runs are refused', async () => {
    writeRun(sb.root, P, T1, OLD);
    const strict = await sb.run(['output', 'synthesize', '--root', sb.root, '--project', P, '--task', T1, '--runs', OLD, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(new RegExp(`^Error: run ${OLD}: no output.md or agent-stdout.txt found in `));
    const outFile = join(sb.dir, 'never.md');
    const escape = await sb.run(['output', 'synthesize', '--root', sb.root, '--project', P, '--task', T1, '--runs', '../../..', '--out', outFile]);
    expect(escape.code).toBe(2);
    expect(existsSync(outFile)).toBe(false);
    const none = await sb.run(['output', 'synthesize', '--runs', ' , ']);
    expect(none.code).toBe(2);
  });
});
