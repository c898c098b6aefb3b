/**
 * The real server started through bin/conductor and bin/run-agent serve (real processes and
 * sockets, a fake agent that is a real executable), driven by the real CLI clients.
 * Needs `npx nest build api && npx nest build cli`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONDUCTOR, getJson, postJson, RunningServer, runCli, RUN_AGENT, startServer, writeConfig, writeFakeAgent } from './helpers';
import { ephemeralPortRange, holdPort } from '../../utils/ports';

describe('conductor server (e2e)', () => {
  let dir: string;
  let root: string;
  let config: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'serve-e2e-'));
    root = join(dir, 'runs');
    config = writeConfig(dir, writeFakeAgent(dir));
    env = { HOME: dir, CONDUCTOR_ROOT: '', CONDUCTOR_CONFIG: '', CONDUCTOR_PORT: '', CONDUCTOR_HOST: '', CONDUCTOR_API_KEY: '', CONDUCTOR_URL: '', CONDUCTOR_DISABLE_TASK_START: '', CONDUCTOR_STATE_DIR: '', CONDUCTOR_ALLOWED_HOSTS: '', CONDUCTOR_NO_AUTH: '1' };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('bin/conductor with no subcommand', () => {
    let server: RunningServer;

    beforeAll(async () => {
      server = await startServer(CONDUCTOR, ['--host', '127.0.0.1', '--port', '0', '--root', root, '--config', config], env, dir);
    });
    afterAll(async () => {
      if (server.child.exitCode === null) await server.stop('SIGKILL');
    });

    it('prints the banner and the real URLs', () => {
      expect(server.stdout()).toMatch(/^conductor \S+\n/);
      // the banner speaks for this project only: no credit line of the upstream author
      expect(server.stdout()).not.toMatch(/By @|linkedin/);
      expect(server.stdout()).toContain(`API listening on http://127.0.0.1:${server.port}/\n`);
      expect(server.stdout()).toContain(`Web UI available at http://127.0.0.1:${server.port}/ui/\n`);
    });

    it('answers /api/v1/health and serves the UI index at /ui/', async () => {
      expect(await getJson(`${server.url}/api/v1/health`)).toEqual({ status: 200, body: { status: 'ok' } });
      const ui = await fetch(`${server.url}/ui/`);
      expect(ui.status).toBe(200);
      expect(ui.headers.get('content-type')).toMatch(/text\/html/);
      expect(await ui.text()).toMatch(/<html/i);
    });

    it('run-agent server status and conductor status talk to it', async () => {
      const viaRunAgent = await runCli(RUN_AGENT, ['server', 'status', '--server', server.url], env);
      expect(viaRunAgent.stderr).toBe('');
      expect(viaRunAgent.code).toBe(0);
      expect(viaRunAgent.stdout).toMatch(/^Version: +\S+\nUptime: +\d+s\nActive Runs: +\d+\nConfigured Agents: +fake\n/);

      const viaConductor = await runCli(CONDUCTOR, ['status', '--json'], { ...env, CONDUCTOR_URL: server.url });
      expect(viaConductor.code).toBe(0);
      expect(JSON.parse(viaConductor.stdout)).toMatchObject({ configured_agents: ['fake'] });
    });

    it('server job submit --follow streams the job log to completion', async () => {
      const r = await runCli(
        RUN_AGENT,
        ['server', 'job', 'submit', '--server', server.url, '--project', 'proj', '--task', 'task-20260101-000000-follow', '--agent', 'fake', '--prompt', 'say hello', '--follow'],
        env,
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Task created: task-20260101-000000-follow, run_id: \S+\nhello from fake agent\ntask task-20260101-000000-follow\n$/);
    });

    it('the task, job and project clients read the finished task back from the real API', async () => {
      const t = 'task-20260101-000000-follow';
      const cli = (...args: string[]) => runCli(RUN_AGENT, ['server', ...args, '--server', server.url], env);

      const status = await cli('task', 'status', t, '--project', 'proj');
      expect(status.stderr).toBe('');
      expect(status.stdout).toMatch(new RegExp(`^Task: {3}proj/${t}\\nStatus: \\S+\\n[^]*\\nRUN ID +STATUS +START TIME +END TIME +EXIT CODE\\n\\S+ +completed +\\S+ +\\S+ +0\\n$`));

      const list = await cli('task', 'list', '--project', 'proj');
      expect(list.stderr).toBe('');
      expect(list.stdout).toMatch(new RegExp(`^TASK ID +STATUS +RUNS +BLOCKED_BY +LAST ACTIVITY\\n${t} +\\S+ +1 +- +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\n$`));

      const runs = await cli('task', 'runs', t, '--project', 'proj');
      expect(runs.stderr).toBe('');
      expect(runs.stdout).toMatch(/^RUN ID +AGENT +STATUS +EXIT +DURATION +STARTED +ERROR\n\S+ +\S+ +completed +0 +\d+s +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s*\n$/);

      const logs = await cli('task', 'logs', t, '--project', 'proj');
      expect(logs.stderr).toBe('');
      expect(logs.stdout).toBe(`hello from fake agent\ntask ${t}\n`);

      const jobs = await cli('job', 'list', '--project', 'proj');
      expect(jobs.stderr).toBe('');
      expect(jobs.stdout).toMatch(new RegExp(`^PROJECT +TASK +STATUS +LAST ACTIVITY\\nproj +${t} +\\S+ +\\S+\\n$`));

      const stats = await cli('project', 'stats', '--project', 'proj');
      expect(stats.stderr).toBe('');
      expect(stats.stdout).toMatch(/^Project: +proj\nTasks: +1\nRuns \(total\): +1\n {2}Running: +0\n {2}Completed: +1\n/);
    });

    it('server bus post and read round-trip a message', async () => {
      const post = await runCli(CONDUCTOR, ['bus', 'post', '--server', server.url, '--project', 'proj', '--type', 'FACT', '--body', 'the sky is blue'], env);
      expect(post.stderr).toBe('');
      expect(post.stdout).toMatch(/^msg_id: MSG-\S+\n$/);

      const read = await runCli(RUN_AGENT, ['server', 'bus', 'read', '--server', server.url, '--project', 'proj', '--tail', '1'], env);
      expect(read.stderr).toBe('');
      expect(read.stdout).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] FACT {10}the sky is blue\n$/);
    });

    it('SIGTERM shuts down gracefully (open SSE streams included) and exits 0', async () => {
      // a message to replay, so the stream has something to send at once
      expect((await postJson(`${server.url}/api/projects/proj/messages`, { type: 'INFO', body: 'bye' })).status).toBe(201);
      const controller = new AbortController();
      const stream = await fetch(`${server.url}/api/projects/proj/messages/stream`, { signal: controller.signal });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      await reader.read(); // the stream is live

      const code = await server.stop('SIGTERM');
      controller.abort();
      expect(code).toBe(0);
      expect(server.stderr()).not.toMatch(/^Error/m);
    });
  });

  describe('bin/run-agent serve', () => {
    it('falls back to the next free port when the configured port is taken', async () => {
      const { port: taken, close } = await holdPort();
      const cfg = writeConfig(mkdtempSync(join(dir, 'cfg-')), join(dir, 'fake-agent.sh'), `api:\n  host: 127.0.0.1\n  port: ${taken}\n`);
      try {
        const server = await startServer(RUN_AGENT, ['serve', '--root', root, '--config', cfg, '--watchdog-interval', '0'], env, dir);
        expect(server.port).toBeGreaterThan(taken);
        expect(server.stdout()).toMatch(/^run-agent \S+\n/);
        expect((await getJson(`${server.url}/api/v1/health`)).status).toBe(200);
        expect(await server.stop('SIGINT')).toBe(0);
      } finally {
        await close();
      }
    });

    it('takes host, port, root, config and monitoring mode from CONDUCTOR_* env', async () => {
      const envRoot = join(dir, 'env-root');
      const cfg = writeConfig(mkdtempSync(join(dir, 'cfg-')), join(dir, 'fake-agent.sh'), '  max_concurrent_root_tasks: 1\n');
      const server = await startServer(
        RUN_AGENT,
        ['serve'],
        { ...env, CONDUCTOR_HOST: '127.0.0.1', CONDUCTOR_PORT: '0', CONDUCTOR_ROOT: envRoot, CONDUCTOR_CONFIG: cfg, CONDUCTOR_DISABLE_TASK_START: 'yes' },
        dir,
      );
      try {
        // port 0 from the env: a kernel-chosen port, not the default 14355.. range
        const [lo, hi] = ephemeralPortRange();
        expect(server.port).toBeGreaterThanOrEqual(lo);
        expect(server.port).toBeLessThanOrEqual(hi);
        expect(server.stdout()).toContain(`Runs root: ${envRoot}\n`);
        expect(server.stdout()).toContain('Task start is disabled (monitoring mode)\n');
        // with a limit of 1 the second task would queue; in monitoring mode nothing is planned
        for (const t of ['task-20260101-000000-mon1', 'task-20260101-000000-mon2']) {
          const created = await postJson(`${server.url}/api/v1/tasks`, { project_id: 'mon', task_id: t, agent_type: 'fake', prompt: 'x' });
          expect(created).toMatchObject({ status: 201, body: { status: 'started' } });
          expect(existsSync(join(envRoot, 'mon', t, 'TASK.md'))).toBe(true);
        }
        expect(existsSync(join(envRoot, '.conductor', 'root-task-planner.yaml'))).toBe(false);
      } finally {
        expect(await server.stop('SIGTERM')).toBe(0);
      }
    });

    it('a bare conductor (no arguments: the fast path) takes everything from CONDUCTOR_* and stops cleanly', async () => {
      const envRoot = join(dir, 'bare-root');
      const server = await startServer(CONDUCTOR, [], { ...env, CONDUCTOR_HOST: '127.0.0.1', CONDUCTOR_PORT: '0', CONDUCTOR_ROOT: envRoot, CONDUCTOR_CONFIG: config, CONDUCTOR_DISABLE_TASK_START: '1' }, dir);
      try {
        expect(server.stdout()).toMatch(/^conductor \S+\n/);
        expect(server.stdout()).toContain(`Runs root: ${envRoot}\n`);
        expect(server.stdout()).toContain('Task start is disabled (monitoring mode)\n');
        expect(await getJson(`${server.url}/api/v1/health`)).toEqual({ status: 200, body: { status: 'ok' } });
      } finally {
        expect(await server.stop('SIGTERM')).toBe(0);
      }
      expect(server.stderr()).toContain('received SIGTERM: shutting down');
      // bad input: one clear line and exit 2, as on the NestJS path
      const bad = await runCli(CONDUCTOR, [], { ...env, CONDUCTOR_PORT: 'seventy', CONDUCTOR_ROOT: envRoot });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe('Error: invalid CONDUCTOR_PORT "seventy": must be a port number between 0 and 65535\n');
    });

    it('--api-key protects the API; the clients send --api-key / CONDUCTOR_API_KEY as a Bearer token', async () => {
      const server = await startServer(RUN_AGENT, ['serve', '--host', '127.0.0.1', '--port', '0', '--root', root, '--config', config, '--api-key', 'k3y'], env, dir);
      try {
        const denied = await runCli(RUN_AGENT, ['server', 'project', 'list', '--server', server.url], env);
        expect(denied.code).toBe(1);
        expect(denied.stderr).toMatch(/^Error: server returned 401: .+ \(pass --api-key or set CONDUCTOR_API_KEY; .+\)\n$/);

        const byFlag = await runCli(RUN_AGENT, ['server', 'project', 'list', '--server', server.url, '--api-key', 'k3y'], env);
        expect(byFlag.stderr).toBe('');
        expect(byFlag.stdout).toMatch(/^PROJECT +TASKS +LAST ACTIVITY\n/);

        const byEnv = await runCli(CONDUCTOR, ['status', '--server', server.url, '--json'], { ...env, CONDUCTOR_API_KEY: 'k3y' });
        expect(byEnv.stderr).toBe('');
        expect(JSON.parse(byEnv.stdout)).toHaveProperty('version');
      } finally {
        expect(await server.stop('SIGTERM')).toBe(0);
      }
    });

    it('an explicit port that is taken is fatal', async () => {
      const { port: taken, close } = await holdPort();
      try {
        const r = await runCli(RUN_AGENT, ['serve', '--host', '127.0.0.1', '--port', String(taken), '--root', root, '--config', config], env, { cwd: dir });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/^Error: .*(EADDRINUSE|in use)/m);
      } finally {
        await close();
      }
    });

    it('listens on 127.0.0.1 by default', async () => {
      // the default start: no opt-out from the environment (a generated key, no warning)
      const server = await startServer(RUN_AGENT, ['serve', '--port', '0', '--root', root, '--config', config], { ...env, CONDUCTOR_NO_AUTH: '' }, dir);
      try {
        expect(server.stdout()).toContain(`API listening on http://127.0.0.1:${server.port}/\n`);
        expect(server.stderr()).not.toContain('warning');
      } finally {
        expect(await server.stop('SIGTERM')).toBe(0);
      }
    });

    it('refuses a non-loopback host without host names, and without an API key unless --insecure-no-auth, which warns', async () => {
      const refused = await runCli(RUN_AGENT, ['serve', '--host', '0.0.0.0', '--port', '0', '--root', root, '--config', config], env, { cwd: dir });
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/^Error: refusing to listen on 0\.0\.0\.0 without an allow-list of host names: .*--allowed-host.*--allow-any-host.*\n$/);
      const noKey = await runCli(RUN_AGENT, ['serve', '--host', '0.0.0.0', '--port', '0', '--root', root, '--config', config, '--allowed-host', 'box.example'], env, { cwd: dir });
      expect(noKey.code).toBe(2);
      expect(noKey.stderr).toMatch(/^Error: refusing --no-auth on 0\.0\.0\.0: .*\n$/);

      const insecure = await startServer(RUN_AGENT, ['serve', '--host', '0.0.0.0', '--port', '0', '--root', root, '--config', config, '--insecure-no-auth', '--allow-any-host'], env, dir);
      try {
        expect(insecure.stderr()).toContain('warning: listening on 0.0.0.0 with no API key (--insecure-no-auth): anyone who reaches this port can start agents\n');
        expect((await getJson(`${insecure.url}/api/v1/health`)).status).toBe(200);
      } finally {
        expect(await insecure.stop('SIGTERM')).toBe(0);
      }

      const keyed = await startServer(RUN_AGENT, ['serve', '--port', '0', '--root', root, '--config', config], { ...env, CONDUCTOR_HOST: '0.0.0.0', CONDUCTOR_API_KEY: 'k3y', CONDUCTOR_ALLOWED_HOSTS: 'box.example', CONDUCTOR_NO_AUTH: '' }, dir);
      try {
        expect(keyed.stderr()).not.toContain('warning');
      } finally {
        expect(await keyed.stop('SIGTERM')).toBe(0);
      }
    });

    it('rejects a bad --port before starting anything', async () => {
      const r = await runCli(RUN_AGENT, ['serve', '--port', 'http', '--root', root], env, { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('Error: invalid --port "http": must be a port number between 0 and 65535\n');
    });
  });
});
