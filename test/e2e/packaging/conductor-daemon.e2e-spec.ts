// scripts/conductor-daemon runs the real bin/conductor in the background: start → pid file and a
// health answer → status → stop → the process is gone.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, cleanEnv, pidAlive, REPO, waitForOk } from './packaging-helpers';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';

const DAEMON = join(REPO, 'scripts', 'conductor-daemon');

describe('scripts/conductor-daemon', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const pidFile = () => join(dir, 'state', 'conductor.pid');
  const daemon = (...args: string[]) => spawnSync(DAEMON, args, { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });

  beforeAll(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'daemon-e2e-'));
    mkdirSync(join(dir, 'runs'));
    env = cleanEnv(join(dir, 'home'), { CONDUCTOR_BIN: join(REPO, 'bin', 'conductor'), CONDUCTOR_STATE_DIR: join(dir, 'state'), CONDUCTOR_STOP_TIMEOUT: '20' });
  });

  afterAll(() => {
    // Never leave a server behind if an assertion failed half-way.
    if (existsSync(pidFile())) {
      const pid = Number(readFileSync(pidFile(), 'utf8'));
      if (pid > 0 && pidAlive(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the server in the background, reports it, shows its log and stops it', async () => {
    const started = daemon('start', '--host', '127.0.0.1', '--port', '0', '--root', join(dir, 'runs'));
    expect(started.stderr).toBe('');
    expect(started.status).toBe(0);
    const pid = Number(readFileSync(pidFile(), 'utf8').trim());
    expect(started.stdout).toContain(`conductor started (pid ${pid})`);
    expect(pidAlive(pid)).toBe(true);

    // The server's stdout goes to the daemon log: it announces the port it bound.
    const port = await waitFor('the port in the daemon log', () => announcedPort(daemon('logs', '-n', '200').stdout));
    const health = await waitForOk(`http://127.0.0.1:${port}/api/v1/health`);
    expect(await health.json()).toEqual({ status: 'ok' });

    const again = daemon('start', '--port', '0');
    expect(again.stdout).toContain(`conductor is already running (pid ${pid})`);
    const status = daemon('status');
    expect(status.status).toBe(0);
    expect(status.stdout).toContain(`conductor is running (pid ${pid})`);
    const logs = daemon('logs', '-n', '200');
    expect(logs.status).toBe(0);
    expect(logs.stdout).toContain('--port 0');
    expect(logs.stdout).toContain(`API listening on http://127.0.0.1:${port}/`);

    const stopped = daemon('stop');
    expect(stopped.status).toBe(0);
    expect(stopped.stdout).toContain(`conductor stopped (pid ${pid})`);
    expect(pidAlive(pid)).toBe(false);
    expect(existsSync(pidFile())).toBe(false);

    const after = daemon('status');
    expect(after.status).toBe(3);
    expect(after.stdout).toContain('conductor is not running');
  }, 90_000);

  it('fails start with the log tail when the server cannot start, leaving no pid file', () => {
    const failed = daemon('start', '--port', 'not-a-port');
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('conductor exited during start-up');
    expect(existsSync(pidFile())).toBe(false);
  });

  it('treats a pid file of a dead process as not running', () => {
    mkdirSync(join(dir, 'state'), { recursive: true });
    // A pid that has just exited: the shell's own child.
    const deadPid = execFileSync('sh', ['-c', 'sleep 0 & echo $!; wait'], { encoding: 'utf8' }).trim();
    writeFileSync(pidFile(), `${deadPid}\n`);
    expect(daemon('status').status).toBe(3);
    expect(daemon('stop').stdout).toContain('conductor is not running');
    expect(existsSync(pidFile())).toBe(false);
  });

  it('rejects an unknown subcommand with a usage line and exit code 2', () => {
    const res = daemon('bogus');
    expect(res.status).toBe(2);
    expect(res.stderr).toBe('usage: conductor-daemon start|stop|restart|status|logs [args...]\n');
  });
});
