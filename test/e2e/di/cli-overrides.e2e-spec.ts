/**
 * Issue #14 (DI): the CLI's root module takes its replaceable parts from the same lib modules as
 * the server, so a Nest testing module (nest-commander-testing) can swap the agent executor, the
 * liveness probe and the change feed, and the commands use the swapped ones (real agent process).
 */
import type { TestingModule } from '@nestjs/testing';
import { CommandTestFactory } from 'nest-commander-testing';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRunInfo } from '@app/storage';
import { makeTempRoot } from '../../utils/api-app';
import { captureStdout, swappedCliModule } from '../../utils/cli-testing';
import { deadPid, running, seedRun, writeRun } from '../../utils/run-fixtures';
import { waitFor } from '../../utils/wait';
import { PretendProbe, RecordingExecutor, RecordingFeed, RecordingWebhooks } from './seams';

const P = 'di';

describe('CliModule with swapped seams', () => {
  const tmp = makeTempRoot();
  const ghost = deadPid();
  const executor = new RecordingExecutor();
  const probe = new PretendProbe(new Set([ghost]));
  const feed = new RecordingFeed();
  const webhooks = new RecordingWebhooks();
  let cli: TestingModule;
  const out = captureStdout();

  beforeAll(async () => {
    cli = await swappedCliModule({ executor, probe, feed, webhooks });
  });

  afterAll(async () => {
    await cli?.close();
    fs.rmSync(tmp.dir, { recursive: true, force: true });
  });

  it('`job` starts the agent through the injected executor and reports run_stop through the injected WebhookService', async () => {
    const task = 'task-20260101-120000-clijob';
    await CommandTestFactory.run(cli, ['job', '--root', tmp.root, '--config', tmp.configPath, '--project', P, '--task', task, '--agent', 'fake', '--prompt', 'hi']);
    expect(executor.launches).toHaveLength(1);
    const launch = executor.launches[0];
    expect(launch.command).toContain('fake-command-agent');
    const info = readRunInfo(path.join(tmp.root, P, task, 'runs', launch.runId, 'run-info.yaml'));
    expect(info).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(webhooks.sent).toContainEqual(expect.objectContaining({ event: 'run_stop', run_id: launch.runId }));
  });

  it('`watch` asks the injected probe and waits on the injected change feed', async () => {
    const task = 'task-20260101-120000-cliwatch';
    const runDir = seedRun(tmp.root, P, task, 'ghost-run', running(ghost));
    // the real probe would see a dead pid (a finished task, nothing to wait for); the swapped one keeps it running
    const watching = CommandTestFactory.run(cli, ['watch', '--root', tmp.root, '--project', P, '--task', task, '--timeout', '60s']);
    await waitFor('a watch under the task', () => feed.watched.some((p) => p.startsWith(path.join(tmp.root, P, task))));
    expect(probe.asked).toContain(ghost);
    writeRun(tmp.root, P, task, 'ghost-run', { ...running(ghost), status: 'completed', exit_code: 0, end_time: new Date() });
    await watching;
    expect(fs.existsSync(runDir)).toBe(true);
    expect(out.join('')).toMatch(/completed/);
  });
});
