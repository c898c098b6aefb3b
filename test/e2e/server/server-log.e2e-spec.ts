/**
 * The structured server log (#30): a real `conductor` process writes one JSON line per request,
 * task start, stop, failed webhook delivery and planner decision on stderr, filtered by
 * --log-level / CONDUCTOR_LOG_LEVEL / api.log_level. Needs `npm run build`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webhookReceiver, type WebhookReceiver } from '../../utils/webhook-receiver';
import { CONDUCTOR, postJson, runCli, RunningServer, serverEnv, startConductor, startServer, waitFor, writeConfig, writeFakeAgent } from './helpers';

type Line = Record<string, unknown> & { time: string; level: string; msg: string };

/** Every JSON line of the server's stderr; anything else there fails the parse. */
function logLines(server: RunningServer): Line[] {
  return server
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

const T1 = 'task-20260101-120000-logone';
const T2 = 'task-20260101-120000-logtwo';

describe('server log (e2e)', () => {
  let dir: string;
  let receiver: WebhookReceiver;
  let server: RunningServer;
  const find = (pred: (l: Line) => boolean) =>
    waitFor(`a log line ${pred.toString()}`, () => logLines(server).find(pred)).catch((err: Error) => {
      throw new Error(`${err.message}\nserver log:\n${server.stderr()}`);
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'server-log-'));
    receiver = await webhookReceiver([500, 500, 500]);
    const config = writeConfig(dir, writeFakeAgent(dir), `  max_concurrent_root_tasks: 1\nwebhook:\n  url: ${receiver.url}/path?token=s3cret\n  events: [run_stop]\n  timeout: 5s\n`);
    server = await startConductor(dir, join(dir, 'runs'), config, { RELEASE_FILE: join(dir, 'release') });
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs requests, planner decisions, task starts and stops, and failed webhook deliveries as JSON lines', async () => {
    const first = await postJson(`${server.url}/api/v1/tasks`, { project_id: 'p', task_id: T1, agent_type: 'fake', prompt: 'x' });
    expect(first.body.status).toBe('started');
    const second = await postJson(`${server.url}/api/v1/tasks`, { project_id: 'p', task_id: T2, agent_type: 'fake', prompt: 'x' });
    expect(second.body).toMatchObject({ status: 'queued', queue_position: 1 });

    const request = await find((l) => l.msg === 'request_completed' && l.method === 'POST' && l.status === 201);
    expect(request).toMatchObject({ level: 'info', context: 'http', path: '/api/v1/tasks', route: '/api/v1/tasks' });
    expect(typeof request.request_id).toBe('string');
    expect(typeof request.duration_ms).toBe('number');
    expect(new Date(request.time).toISOString()).toBe(request.time);

    expect(await find((l) => l.msg === 'planner_decision' && l.decision === 'start')).toMatchObject({ level: 'info', task_id: T1, run_id: first.body.run_id, limit: 1 });
    expect(await find((l) => l.msg === 'planner_decision' && l.decision === 'queue')).toMatchObject({ task_id: T2, queue_position: 1, running: 1, limit: 1 });
    expect(await find((l) => l.msg === 'task_started')).toMatchObject({ level: 'info', context: 'tasks', project_id: 'p', task_id: T1, run_id: first.body.run_id, agent: 'fake' });

    // stopping the queued task: a stop line and the planner dropping it
    expect((await fetch(`${server.url}/api/v1/tasks/${T2}?project_id=p`, { method: 'DELETE' })).status).toBe(202);
    expect(await find((l) => l.msg === 'task_stop')).toMatchObject({ level: 'info', project_id: 'p', task_id: T2, stopped_by: 'api task cancel' });
    // the cancel marks the task done first: the planner drops its queued entry for that reason
    expect(await find((l) => l.msg === 'planner_decision' && l.decision === 'drop')).toMatchObject({ task_id: T2, reason: 'task done' });

    // the first task ends; its run_stop webhook fails three times (500)
    writeFileSync(join(dir, 'release'), '');
    expect(await find((l) => l.msg === 'task_finished')).toMatchObject({ task_id: T1, status: 'done' });
    const failed = await find((l) => l.msg === 'webhook_delivery_failed');
    expect(failed).toMatchObject({ level: 'warn', context: 'webhook', event: 'run_stop', task_id: T1, attempts: 3, error: 'unexpected status 500', receiver: new URL(receiver.url).origin });
    expect(failed.delivery_id).toBe(receiver.received[0].headers['webhook-id']);
    // the receiver's path and query (a token) stay out of the log
    expect(server.stderr()).not.toContain('s3cret');
  }, 60_000);

  it('logs a successful health probe at debug only; --log-level debug shows it, warn drops request lines', async () => {
    await fetch(`${server.url}/api/v1/health`);
    await fetch(`${server.url}/api/projects`);
    await find((l) => l.msg === 'request_completed' && l.path === '/api/projects');
    expect(logLines(server).some((l) => l.path === '/api/v1/health')).toBe(false);

    const debugServer = await startConductor(dir, join(dir, 'runs-debug'), join(dir, 'config.yaml'), { CONDUCTOR_LOG_LEVEL: 'debug' });
    const warnServer = await startServer(CONDUCTOR, ['--host', '127.0.0.1', '--port', '0', '--root', join(dir, 'runs-warn'), '--config', join(dir, 'config.yaml'), '--log-level', 'warn'], serverEnv(dir), dir);
    try {
      await fetch(`${debugServer.url}/api/v1/health`);
      await waitFor('the debug health line', () => logLines(debugServer).find((l) => l.msg === 'request_completed' && l.path === '/api/v1/health' && l.level === 'debug'));
      expect((await fetch(`${warnServer.url}/api/v1/nothing-here`)).status).toBe(404);
      // a 404 is logged at info: absent at warn, while a later probe of the debug server shows lines still flow there
      await fetch(`${debugServer.url}/api/v1/nothing-here`);
      await waitFor('the debug 404 line', () => logLines(debugServer).find((l) => l.path === '/api/v1/nothing-here'));
      expect(logLines(warnServer).filter((l) => l.msg === 'request_completed')).toEqual([]);
    } finally {
      await debugServer.stop('SIGKILL');
      await warnServer.stop('SIGKILL');
    }
  }, 60_000);

  it('refuses a level it does not know with exit 2 and one line', async () => {
    const r = await runCli(CONDUCTOR, ['--port', '0', '--root', join(dir, 'runs-bad'), '--config', join(dir, 'config.yaml'), '--log-level', 'loud'], serverEnv(dir), { cwd: dir });
    expect([r.code, r.stderr]).toEqual([2, 'Error: invalid --log-level "loud": must be one of error, warn, info, debug\n']);
    const env = await runCli(CONDUCTOR, ['--port', '0', '--root', join(dir, 'runs-bad'), '--config', join(dir, 'config.yaml')], serverEnv(dir, { CONDUCTOR_LOG_LEVEL: 'verbose' }), { cwd: dir });
    expect([env.code, env.stderr]).toEqual([2, 'Error: invalid CONDUCTOR_LOG_LEVEL "verbose": must be one of error, warn, info, debug\n']);
    const badConfig = join(dir, 'bad-level.yaml');
    writeFileSync(badConfig, 'agents:\n  fake:\n    type: command\n    command: /bin/true\napi:\n  log_level: loud\n');
    const cfg = await runCli(CONDUCTOR, ['--port', '0', '--root', join(dir, 'runs-bad'), '--config', badConfig], serverEnv(dir), { cwd: dir });
    expect([cfg.code, cfg.stderr]).toEqual([2, `Error: ${badConfig}:6:3: api.log_level: "loud" is invalid; valid values: error, warn, info, debug\n`]);
  });
});
