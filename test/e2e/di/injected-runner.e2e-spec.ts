/**
 * Issue #14 (DI): the parts of `run-agent mcp` and `run-agent worker` that start agents do so
 * through the CLI's injected RunnerService, so a swapped executor (and webhook sender) reaches
 * the sub-tasks of an MCP client and the tasks a worker pulls from NATS (real agent process,
 * real nats-server).
 */
import type { TestingModule } from '@nestjs/testing';
import { CommandTestFactory } from 'nest-commander-testing';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { JobStarter } from '@app/mcp';
import { MessageBusService } from '@app/messagebus';
import { AGENT_EXECUTOR, RunnerService } from '@app/runner';
import { createScaleoutServer, createWorker, type ScaleoutServer, type Worker } from '@app/scaleout';
import { createLivenessProbe, loadConfig, readRunInfo, RunsLayout, STORAGE_INDEX_FACTORY, storageIndexFactory, type StorageIndexFactory } from '@app/storage';
import { WebhookService } from '@app/webhook';
import { fullCliModule } from '../../../apps/cli/src/cli.module';
import { makeTempRoot } from '../../utils/api-app';
import { natsServerAvailable, NatsServerProcess } from '../../utils/nats-server';
import { waitFor } from '../../utils/wait';
import { RecordingExecutor, RecordingWebhooks } from './seams';

const P = 'di';

describe('CLI parts that start agents use the injected RunnerService', () => {
  const tmp = makeTempRoot();
  const config = loadConfig(tmp.configPath, { strict: false });
  const executor = new RecordingExecutor();
  const webhooks = new RecordingWebhooks();
  // the runs roots the runner took its layout from (the injected index factory, not a `new` of its own)
  const indexedRoots: string[] = [];
  const realIndexFor = storageIndexFactory(createLivenessProbe());
  const recordingIndexFor: StorageIndexFactory = (root) => {
    indexedRoots.push(root);
    return realIndexFor(root);
  };
  let cli: TestingModule;

  beforeAll(async () => {
    cli = await CommandTestFactory.createTestingCommand({ imports: [fullCliModule()] })
      .overrideProvider(AGENT_EXECUTOR)
      .useValue(executor)
      .overrideProvider(WebhookService)
      .useValue(webhooks)
      .overrideProvider(STORAGE_INDEX_FACTORY)
      .useValue(recordingIndexFor)
      .compile();
  });

  afterAll(async () => {
    await cli?.close();
    fs.rmSync(tmp.dir, { recursive: true, force: true });
  });

  it('MCP task_start (JobStarter) runs the sub-task through the injected executor, index factory and webhook sender', async () => {
    const starter = new JobStarter({ layout: new RunsLayout(tmp.root), writers: cli.get(MessageBusService).writers, config, runner: cli.get(RunnerService) });
    const task = 'task-20260101-120000-mcpjob';
    const started = await starter.start({ projectId: P, taskId: task, prompt: 'hi', agent: 'fake' });
    await starter.settled();
    expect(executor.launches.map((l) => l.runId)).toContain(started.run_id);
    expect(indexedRoots).toContain(tmp.root);
    const info = readRunInfo(new RunsLayout(tmp.root).runInfoPath(P, task, started.run_id));
    expect(info).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(webhooks.sent).toContainEqual(expect.objectContaining({ event: 'run_stop', run_id: started.run_id }));
  });

  const itNats = natsServerAvailable() ? it : it.skip;
  itNats('a worker runs the task it pulls through the injected executor', async () => {
    const nats = new NatsServerProcess();
    const replica = path.join(tmp.dir, 'replica');
    const hostRoot = path.join(tmp.dir, 'worker');
    fs.mkdirSync(replica);
    fs.mkdirSync(hostRoot);
    let server: ScaleoutServer | undefined;
    let worker: Worker | undefined;
    try {
      await nats.start();
      server = createScaleoutServer(nats.url, replica);
      await server.start();
      worker = createWorker({ url: nats.url, layout: new RunsLayout(hostRoot), writers: cli.get(MessageBusService).writers, host: 'di-host', config, runner: cli.get(RunnerService) });
      await worker.start();
      const task = 'task-20260101-120000-worker';
      const runId = '20260101-1200000000-1-1';
      await server.submit({ projectId: P, taskId: task, runId, prompt: 'hi', agent: 'fake', env: { FAKE_AGENT_DONE: '1' } });
      await waitFor('the worker to finish the task', () => fs.existsSync(path.join(hostRoot, P, task, 'DONE')), 60_000);
      expect(executor.launches.map((l) => l.runId)).toContain(runId);
    } finally {
      await worker?.stop();
      await server?.close();
      await nats.dispose();
    }
  });
});
