// `conductor monitor` (= `run-agent server monitor`) against the real built API server on
// 127.0.0.1 with fake agents. Needs `npx nest build api` and `npx nest build cli`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { liveGroupLeader, PROJECT, REPO, RUN_AGENT, runningInfo, Sandbox, writeRun } from './helpers';
import { runCli } from '../../utils/cli';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';
import { processAlive } from '../../utils/processes';

const CONDUCTOR = join(REPO, 'bin', 'conductor');
const START = 'task-20260101-000000-srv-start';
const RESUME = 'task-20260101-000000-srv-resume';
const RECOVER = 'task-20260101-000000-srv-recover';
const FINAL = 'task-20260101-000000-srv-final';

describe('conductor monitor (API client, real server)', () => {
  let sb: Sandbox;
  let server: ChildProcess;
  let url: string;
  let leader: number;

  beforeAll(async () => {
    sb = new Sandbox();
    writeRun(sb.root, PROJECT, RESUME, '20260101-0000000000-1-1', { status: 'failed', exit_code: 1 });
    leader = liveGroupLeader().pid!;
    writeRun(sb.root, PROJECT, RECOVER, '20260101-0000000000-1-1', runningInfo(leader, 3_600_000));
    const finalRun = writeRun(sb.root, PROJECT, FINAL, '20260101-0000000000-1-1', {
      output_path: join(sb.root, PROJECT, FINAL, 'runs', '20260101-0000000000-1-1', 'output.md'),
    });
    writeFileSync(join(finalRun, 'output.md'), 'finished\n');
    server = spawn(process.execPath, [RUN_AGENT, 'serve', '--host', '127.0.0.1', '--port', '0', '--root', sb.root, '--watchdog-interval', '0', '--no-auth'], {
      cwd: sb.dir,
      env: sb.env({ FAKE_AGENT_DONE: '1' }),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let stdout = '';
    server.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    url = `http://127.0.0.1:${await waitFor('the server to announce its port', () => announcedPort(stdout))}`;
    await waitFor('the server to answer', async () => (await fetch(`${url}/api/v1/health`)).ok);
  });

  afterAll(async () => {
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode !== null ? r(undefined) : server.once('close', r)));
    try {
      process.kill(-leader, 'SIGKILL');
    } catch {
      // stopped by the monitor
    }
    sb.cleanup();
  });

  it('starts, resumes, recovers and finalizes through the API, then ticks the finished items', async () => {
    const todo = join(sb.dir, 'TODOs.md');
    writeFileSync(todo, [`- [ ] ${START} say hello`, `- [ ] ${RESUME} retry`, `- [ ] ${RECOVER} stuck`, `- [ ] ${FINAL} finished`, ''].join('\n'));
    const args = ['monitor', '--server', url, '--project', PROJECT, '--todo', todo, '--once', '--agent', 'codex', '--rate-limit', '1ms', '--stale-after', '1m'];

    const dry = await sb.run(['server', ...args, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`  [start   ] ${START} — unknown to the server\n`);
    expect(dry.stdout).toContain(`  [resume  ] ${RESUME} — run 20260101-0000000000-1-1 failed\n`);
    expect(dry.stdout).toMatch(new RegExp(`  \\[recover \\] ${RECOVER} — run 20260101-0000000000-1-1 alive but quiet for \\d+s\n`));
    expect(dry.stdout).toContain(`  [finalize] ${FINAL} — run 20260101-0000000000-1-1 completed with output\n`);
    expect(existsSync(join(sb.root, PROJECT, START))).toBe(false);

    const first = await runConductor(args);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`  \\[OK\\]    started ${START} as run \\S+\n`));
    expect(first.stdout).toMatch(new RegExp(`  \\[OK\\]    resumed ${RESUME} as run \\S+\n`));
    expect(first.stdout).toMatch(new RegExp(`  \\[OK\\]    restarted stale task ${RECOVER} as run \\S+\n`));
    expect(first.stdout).toContain(`  [OK]    finalized ${FINAL} (item ticked)\n`);
    expect(existsSync(join(sb.root, PROJECT, FINAL, 'DONE'))).toBe(true);
    expect(readFileSync(join(sb.root, PROJECT, START, 'TASK.md'), 'utf8')).toBe(`${START} say hello\n`);
    await waitFor(() => !processAlive(leader));

    // The server runs the three tasks to DONE (fake agents create DONE); the next pass ticks them.
    await waitFor(() => [START, RESUME, RECOVER].every((t) => existsSync(join(sb.root, PROJECT, t, 'DONE'))));
    const second = await runConductor(args);
    expect(second.code).toBe(0);
    for (const t of [START, RESUME, RECOVER]) expect(second.stdout).toContain(`  [finalize] ${t} — DONE on the server\n`);
    expect(readFileSync(todo, 'utf8')).toBe([`- [x] ${START} say hello`, `- [x] ${RESUME} retry`, `- [x] ${RECOVER} stuck`, `- [x] ${FINAL} finished`, ''].join('\n'));
    const third = await runConductor(args);
    expect(third.stdout).toBe(`monitor: no pending task IDs found in ${todo}\n`);
  });

  it('needs --project and a reachable server', async () => {
    const todo = join(sb.dir, 'empty.md');
    writeFileSync(todo, '');
    expect(await runConductor(['monitor', '--server', url, '--todo', todo, '--once'])).toMatchObject({ code: 2, stderr: 'Error: --project is required\n' });
    // Port 1 (tcpmux): privileged, nothing in the suite listens there, so the connection is refused.
    const port = 1;
    const down = await runConductor(['monitor', '--server', `http://127.0.0.1:${port}`, '--project', PROJECT, '--todo', todo, '--once']);
    expect(down.code).toBe(0); // nothing pending: the server is not asked
    writeFileSync(todo, `- [ ] ${START} x\n`);
    const unreachable = await runConductor(['monitor', '--server', `http://127.0.0.1:${port}`, '--project', PROJECT, '--todo', todo, '--once']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^Error: cannot reach conductor at http:\/\/127\.0\.0\.1:\d+/);
  });

  function runConductor(args: string[]): ReturnType<typeof runCli> {
    return runCli(args, { bin: CONDUCTOR, cwd: sb.dir, env: sb.env() });
  }
});
