import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalAgentExecutor } from '@app/runner';
import { gatedArgv } from '../../../libs/runner/src/agent-executor';
import { processAlive } from '../../utils/processes';
import { waitFor } from '../../utils/wait';

/** The agent's start gate (issue #31): no agent runs before its runner recorded it and released it. */
describe('agent start gate', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-gate-'));
    writeFileSync(join(dir, 'prompt.md'), 'hi\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // writes its pid to the marker (the proof that the agent itself ran), copies stdin, prints the environment it was exec'd with
  const agentArgs = (marker: string): string[] => ['-c', `echo $$ > '${marker}'; cat; tr '\\0' '\\n' < /proc/$$/environ`];

  it('a runner killed before the release leaves no agent: the gate sees end of file and exits without exec', async () => {
    const marker = join(dir, 'ran');
    const gate = gatedArgv('/bin/sh', agentArgs(marker));
    // a stand-in runner: spawns the gated process as the executor does (fd 3 a pipe it holds), never releases it
    const runnerScript =
      'const { spawn } = require("node:child_process");' +
      'const [c, a] = JSON.parse(process.argv[1]);' +
      'const child = spawn(c, a, { detached: true, stdio: ["ignore", "ignore", "ignore", "pipe"] });' +
      'child.on("spawn", () => process.stdout.write(child.pid + "\\n"));';
    const runner = spawn(process.execPath, ['-e', runnerScript, JSON.stringify([gate.command, gate.args])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    runner.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor('the gated child', () => out.includes('\n'));
    const gated = Number(out.trim());
    expect(processAlive(gated)).toBe(true);
    runner.kill('SIGKILL');
    await waitFor('the gated child to exit', () => !processAlive(gated));
    expect(existsSync(marker)).toBe(false);
  });

  it('released, the agent runs in place: same pid and group, its stdio and its environment (passed as environment, never on a command line)', async () => {
    const marker = join(dir, 'ran');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', AGENT_TOKEN: 'secret-token', LINES_VAR: 'a\nb' };
    const handle = await new LocalAgentExecutor().start({
      runId: 'r1',
      command: '/bin/sh',
      args: agentArgs(marker),
      cwd: dir,
      env,
      stdinPath: join(dir, 'prompt.md'),
      stdoutPath: join(dir, 'out.txt'),
      stderrPath: join(dir, 'err.txt'),
      outliveRunner: true,
    });
    expect(handle.pgid).toBe(handle.pid);
    // waiting at the gate: not the agent yet, and the token is on no command line
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(`/proc/${handle.pid}/cmdline`, 'utf8')).not.toContain('secret-token');
    handle.release!();
    const exit = await handle.wait();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Number(readFileSync(marker, 'utf8').trim())).toBe(handle.pid);
    const out = readFileSync(join(dir, 'out.txt'), 'utf8');
    expect(out.startsWith('hi\n')).toBe(true);
    expect(out).toContain('AGENT_TOKEN=secret-token\n');
    expect(out).toContain('LINES_VAR=a\nb\n');
  });

  it('a command that cannot start is refused before any process starts, as spawn would (ENOENT, EACCES)', async () => {
    const launch = (command: string) =>
      new LocalAgentExecutor().start({ runId: 'r2', command, args: [], cwd: dir, env: { PATH: '/usr/bin:/bin' }, stdinPath: join(dir, 'prompt.md'), stdoutPath: join(dir, 'out.txt'), stderrPath: join(dir, 'err.txt') });
    await expect(launch('no-such-agent-cli-xyz')).rejects.toMatchObject({ code: 'ENOENT', message: 'spawn no-such-agent-cli-xyz ENOENT' });
    writeFileSync(join(dir, 'not-executable'), '#!/bin/sh\n', { mode: 0o644 });
    await expect(launch(join(dir, 'not-executable'))).rejects.toMatchObject({ code: 'EACCES' });
  });
});
