import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readRunInfo, RunsLayout } from '@app/storage';
import { startCli } from '../../utils/cli';
import { scriptedServer, type ScriptedServer, sseEvent } from '../../utils/scripted-http';
import { busTypesAndBodies, cliEnv, PROJECT, processAlive, RUN_AGENT, runInfos, taskId, tempRoot, waitFor } from './helpers';

/*
 * A REST agent runs inside its runner: the run's record carries the runner's pid/pgid
 * (`in_process: true`), which may be a server's or a shell job's group. `run-agent stop` must not
 * signal it: it leaves STOPPED-BY, the runner aborts the request and records the stop.
 */
describe('stop of a REST run (executed inside its runner)', () => {
  const tmp = tempRoot();
  const base = dirname(tmp.root);
  const home = join(base, 'home');
  const layout = new RunsLayout(tmp.root);
  const started: ChildProcess[] = [];
  const bystanders: number[] = [];
  let server: ScriptedServer | undefined;
  beforeAll(() => mkdirSync(home, { recursive: true }));
  afterAll(async () => {
    for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const pid of bystanders) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    await server?.close();
    tmp.cleanup();
  });

  it('run-agent stop from another process: the runner ends the request, its group survives, the run reads stopped', async () => {
    // the provider streams a first chunk, then keeps the response open
    server = await scriptedServer([
      (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(sseEvent({ choices: [{ index: 0, delta: { content: 'thinking…' } }] }));
      },
    ]);
    const config = join(base, 'config.yaml');
    writeFileSync(config, ['agents:', '  grok:', '    type: xai', '    token: k', `    base_url: ${server.url}/v1`, ''].join('\n'));
    const task = taskId('rest-stop');
    const bystanderFile = join(base, `${task}.bystander`);
    const args = ['job', '--root', tmp.root, '--config', config, '--project', PROJECT, '--task', task, '--agent', 'grok', '--prompt', 'x'];
    const runner = spawn('sh', ['-c', `sleep 300 & echo $! > '${bystanderFile}'; exec "$0" "$@"`, process.execPath, RUN_AGENT, ...args], {
      detached: true,
      env: cliEnv(home),
      stdio: 'ignore',
    });
    started.push(runner);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => runner.on('exit', (code, signal) => resolve({ code, signal })));
    const bystander = await waitFor(() => (existsSync(bystanderFile) ? Number(readFileSync(bystanderFile, 'utf8').trim()) || undefined : undefined));
    bystanders.push(bystander);
    const info = await waitFor(() => {
      const i = runInfos(layout.taskDir(PROJECT, task))[0];
      return i?.in_process && existsSync(i.stdout_path!) && readFileSync(i.stdout_path!, 'utf8') === 'thinking…' ? i : undefined;
    }, 30_000);
    expect(info).toMatchObject({ pid: runner.pid, pgid: runner.pid, status: 'running' });
    const runDir = join(layout.runsDir(PROJECT, task), info.run_id);

    const stop = await startCli(['stop', '--run-dir', runDir, '--grace', '2s'], { env: cliEnv(home) }).done;
    expect(stop.stderr).toBe('');
    expect(stop.code).toBe(0);
    expect(stop.stdout).toBe(`Stopped run ${info.run_id} (PID ${runner.pid})\n`);
    expect((await exited).signal).toBeNull();
    expect(processAlive(bystander)).toBe(true);
    const after = readRunInfo(join(runDir, 'run-info.yaml'));
    expect(after).toMatchObject({ status: 'failed', exit_code: 143 });
    expect(after.error_summary).toMatch(/^stopped by run-agent stop \(pid \d+\)$/);
    expect(readFileSync(join(runDir, 'run-info.yaml'), 'utf8')).not.toContain('in_process');
    expect(busTypesAndBodies(layout.taskBus(PROJECT, task))).toContain('RUN_CRASH run stopped with code 143');
  }, 60_000);
});
