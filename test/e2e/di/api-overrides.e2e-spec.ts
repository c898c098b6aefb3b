/**
 * Issue #14 (DI): the server's composition root takes its replaceable parts from the lib
 * modules, so a Nest testing module can swap the agent executor, the liveness probe and the
 * change feed — and the swapped ones are the ones used (real server, real agent process).
 */
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { FastifyInstance } from 'fastify';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { AGENT_EXECUTOR, RunnerService } from '@app/runner';
import { CHANGE_FEED, LIVENESS_PROBE, loadConfig, STORAGE_INDEX, StorageIndex } from '@app/storage';
import { ApiModule } from '../../../apps/api/src/api.module';
import { buildApiContext, configureApp } from '../../../apps/api/src/server';
import { makeTempRoot } from '../../utils/api-app';
import { deadPid, running, seedRun } from '../../utils/run-fixtures';
import { waitFor } from '../../utils/wait';
import { WebhookService } from '@app/webhook';
import { PretendProbe, RecordingExecutor, RecordingFeed, RecordingWebhooks } from './seams';

const P = 'di';

describe('ApiModule with swapped seams', () => {
  const tmp = makeTempRoot();
  const ghost = deadPid();
  const executor = new RecordingExecutor();
  const probe = new PretendProbe(new Set([ghost]));
  const feed = new RecordingFeed();
  const webhooks = new RecordingWebhooks();
  let app: NestFastifyApplication;
  let base: string;

  beforeAll(async () => {
    const settings = buildApiContext({ root: tmp.root, config: loadConfig(tmp.configPath, { strict: false }), stopGraceMs: 2000 });
    const moduleRef = await Test.createTestingModule({ imports: [ApiModule.forRoot(settings)] })
      .overrideProvider(AGENT_EXECUTOR)
      .useValue(executor)
      .overrideProvider(LIVENESS_PROBE)
      .useValue(probe)
      .overrideProvider(CHANGE_FEED)
      .useValue(feed)
      .overrideProvider(WebhookService)
      .useValue(webhooks)
      .compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter({ forceCloseConnections: true }), { logger: false, bodyParser: false });
    configureApp(app, settings, undefined);
    await app.init();
    await (app.getHttpAdapter().getInstance() as FastifyInstance).ready();
    await app.listen(0, '127.0.0.1');
    const addr = app.getHttpServer().address() as { port: number };
    base = `http://127.0.0.1:${addr.port}`;
  });

  afterAll(async () => {
    await app?.close();
    fs.rmSync(tmp.dir, { recursive: true, force: true });
  });

  it('POST /api/v1/tasks starts the agent through the injected executor and sends run_stop through the injected WebhookService', async () => {
    const task = 'task-20260101-120000-swapexec';
    const res = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: P, task_id: task, agent_type: 'fake', prompt: 'hi', config: { FAKE_AGENT_DONE: '1', FAKE_AGENT_TEXT: 'swapped' } }),
    });
    expect(res.status).toBe(201);
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const launch = await waitFor('the recorded launch', () => executor.launches.find((l) => l.runId === runId));
    expect(launch.command).toContain('fake-command-agent');
    await waitFor('the task to finish', () => fs.existsSync(path.join(tmp.root, P, task, 'DONE')));
    const info = await waitFor('the run to complete', async () => {
      const run = (await (await fetch(`${base}/api/v1/runs/${runId}`)).json()) as { status: string };
      return run.status === 'completed' ? run : undefined;
    });
    expect(info.status).toBe('completed');
    // the loop ran inside RunnerService (it tracked it until the loop returned)
    await waitFor('the loop to return', () => app.get(RunnerService).activeCount === 0);
    // run_stop of the server's run went out through the injected WebhookService
    expect(webhooks.sent).toContainEqual(expect.objectContaining({ event: 'run_stop', run_id: runId, status: 'completed' }));
  });

  it('the injected liveness probe decides whether a run is alive (StorageIndex included)', async () => {
    const task = 'task-20260101-120000-swapprobe';
    seedRun(tmp.root, P, task, 'ghost-run', running(ghost));
    // the real probe would reconcile this dead pid to failed; the swapped one says it is alive
    const run = (await (await fetch(`${base}/api/v1/runs/ghost-run`)).json()) as { status: string };
    expect(run.status).toBe('running');
    expect(probe.asked).toContain(ghost);
    expect(app.get<StorageIndex>(STORAGE_INDEX).runInfo(P, task, 'ghost-run')?.status).toBe('running');
  });

  it('message streams watch the bus through the injected change feed', async () => {
    const busPath = path.join(tmp.root, P, 'PROJECT-MESSAGE-BUS.md');
    const received: string[] = [];
    const req = http.get(`${base}/api/projects/${P}/messages/stream`, (res) => res.on('data', (c: Buffer) => received.push(c.toString())));
    req.on('error', () => undefined);
    try {
      await waitFor('a watch of the project bus', () => feed.watched.includes(busPath));
      const post = await fetch(`${base}/api/projects/${P}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'INFO', body: 'through the swapped feed' }),
      });
      expect(post.status).toBeLessThan(300);
      await waitFor('the streamed message', () => received.join('').includes('through the swapped feed'));
    } finally {
      req.destroy();
    }
  });
});
