/**
 * Issue #32: the hot commands (`status`, `list`, `output`, `stop`, `task`, `job`) run on two composition roots: the
 * Nest container (CliModule, nest-commander) and the plain root of the fast path
 * (apps/cli/src/fast/plain-root.ts). Both take the same seams, so a swapped liveness probe, agent
 * executor or webhook sender reaches the commands through either (real agent processes).
 */
import { CommandTestFactory } from 'nest-commander-testing';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRunInfo } from '@app/storage';
import { plainRoot } from '../../../apps/cli/src/fast/plain-root';
import { runHotCommand } from '../../../apps/cli/src/fast/run-hot';
import { makeTempRoot } from '../../utils/api-app';
import { captureStdout, swappedCliModule } from '../../utils/cli-testing';
import { deadPid, killGroup, running, runningFields, seedRun, spawnSleeper } from '../../utils/run-fixtures';
import { waitFor } from '../../utils/wait';
import { PretendProbe, RecordingExecutor, RecordingWebhooks } from './seams';

const P = 'di-hot';
const TASK = 'task-20260101-120000-hotghost';

type Root = { name: string; probe: PretendProbe; executor: RecordingExecutor; webhooks: RecordingWebhooks; run: (argv: string[]) => Promise<void>; close: () => Promise<void> };

describe.each(['nest', 'plain'] as const)('hot commands on the %s composition root with a swapped liveness probe', (kind) => {
  const tmp = makeTempRoot();
  const ghost = deadPid();
  let root: Root;
  const out = captureStdout();

  beforeAll(async () => {
    seedRun(tmp.root, P, TASK, 'ghost-run', running(ghost));
    const probe = new PretendProbe(new Set([ghost]));
    const executor = new RecordingExecutor();
    const webhooks = new RecordingWebhooks();
    if (kind === 'nest') {
      const cli = await swappedCliModule({ probe, executor, webhooks });
      root = { name: kind, probe, executor, webhooks, run: (argv) => CommandTestFactory.run(cli, argv), close: () => cli.close() };
    } else {
      // process.stdout, which captureStdout watches, instead of the root's own write(2) on descriptor 1
      const seams = plainRoot({ probe, executor, webhookSender: webhooks, stdout: process.stdout });
      root = {
        name: kind,
        probe,
        executor,
        webhooks,
        run: async (argv) => {
          expect(await runHotCommand(argv, seams)).toBe(true);
        },
        close: async () => seams.close(),
      };
    }
  });

  afterAll(async () => {
    await root?.close();
    fs.rmSync(tmp.dir, { recursive: true, force: true });
  });

  it('`status` asks the injected probe: the dead pid it calls alive reads as running', async () => {
    await root.run(['status', '--root', tmp.root, '--project', P, '--json']);
    expect(root.probe.asked).toContain(ghost);
    const rows = (JSON.parse(out.join('')) as { tasks: { task_id: string; status: string }[] }).tasks;
    expect(rows).toEqual([expect.objectContaining({ task_id: TASK, status: 'running' })]);
  });

  it('`list --project` builds its index with the injected probe', async () => {
    root.probe.asked.length = 0;
    await root.run(['list', '--root', tmp.root, '--project', P, '--json']);
    expect(root.probe.asked).toContain(ghost);
    const rows = (JSON.parse(out.join('')) as { tasks: { task_id: string; latest_status: string }[] }).tasks;
    expect(rows).toEqual([expect.objectContaining({ task_id: TASK, latest_status: 'running' })]);
  });

  it('`job` starts the agent through the injected executor and reports run_stop through the injected webhook sender', async () => {
    const task = 'task-20260101-120000-hotjob';
    await root.run(['job', '--root', tmp.root, '--config', tmp.configPath, '--project', P, '--task', task, '--agent', 'fake', '--prompt', 'hi']);
    const launch = root.executor.launches.find((l) => l.env.JRUN_TASK_ID === task);
    expect(launch?.command).toContain('fake-command-agent');
    const info = readRunInfo(path.join(tmp.root, P, task, 'runs', launch!.runId, 'run-info.yaml'));
    expect(info).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(root.webhooks.sent).toContainEqual(expect.objectContaining({ event: 'run_stop', run_id: launch!.runId }));
  });

  it('`task` runs its Ralph loop through the injected executor', async () => {
    const task = 'task-20260101-120000-hottask';
    // the fake agent writes DONE (test/fixtures/agents/README.md)
    process.env.FAKE_AGENT_DONE = '1';
    try {
      await root.run(['task', '--root', tmp.root, '--config', tmp.configPath, '--project', P, '--task', task, '--agent', 'fake', '--prompt', 'hi', '--max-restarts', '0', '--restart-delay', '0s']);
    } finally {
      delete process.env.FAKE_AGENT_DONE;
    }
    const launches = root.executor.launches.filter((l) => l.env.JRUN_TASK_ID === task);
    expect(launches).toHaveLength(1);
    expect(readRunInfo(path.join(tmp.root, P, task, 'runs', launches[0].runId, 'run-info.yaml'))).toMatchObject({ exit_code: 0 });
    expect(fs.existsSync(path.join(tmp.root, P, task, 'DONE'))).toBe(true);
    expect(process.exitCode ?? 0).toBe(0);
  });

  it('`output` prints the newest run\'s output, and `stop` stops a live run through the root\'s runner', async () => {
    const task = 'task-20260101-120000-hotstop';
    const sleeper = spawnSleeper();
    try {
      seedRun(tmp.root, P, task, 'live-run', runningFields(sleeper), 'hello from the run\n');
      await root.run(['output', '--root', tmp.root, '--project', P, '--task', task, '--file', 'stdout']);
      expect(out.join('')).toBe('hello from the run\n');
      out.length = 0;
      await root.run(['stop', '--root', tmp.root, '--project', P, '--task', task, '--grace', '5s']);
      expect(out.join('')).toMatch(/^Stopped run live-run \(PID \d+\)\n$/);
      await waitFor('the stopped agent to exit', () => sleeper.exitCode !== null || sleeper.signalCode !== null);
    } finally {
      killGroup(sleeper);
    }
  });
});
