/**
 * Issue #32: the hot commands (`status`, `list`) run on two composition roots: the Nest container
 * (CliModule, nest-commander) and the plain root of the fast path (apps/cli/src/fast/plain-root.ts).
 * Both take the same seams, so a swapped liveness probe reaches the commands through either, and
 * both print the same thing for the same runs.
 */
import type { TestingModule } from '@nestjs/testing';
import { CommandTestFactory } from 'nest-commander-testing';
import * as fs from 'node:fs';
import { LIVENESS_PROBE } from '@app/storage';
import { fullCliModule } from '../../../apps/cli/src/cli.module';
import { plainRoot } from '../../../apps/cli/src/fast/plain-root';
import { runHotCommand } from '../../../apps/cli/src/fast/run-hot';
import { makeTempRoot } from '../../utils/api-app';
import { deadPid, running, seedRun } from '../../utils/run-fixtures';
import { PretendProbe } from './seams';

const P = 'di-hot';
const TASK = 'task-20260101-120000-hotghost';

type Root = { name: string; probe: PretendProbe; run: (argv: string[]) => Promise<void>; close: () => Promise<void> };

describe.each(['nest', 'plain'] as const)('hot commands on the %s composition root with a swapped liveness probe', (kind) => {
  const tmp = makeTempRoot();
  const ghost = deadPid();
  let root: Root;
  let out: string[];
  let writeSpy: jest.SpyInstance;

  beforeAll(async () => {
    seedRun(tmp.root, P, TASK, 'ghost-run', running(ghost));
    const probe = new PretendProbe(new Set([ghost]));
    if (kind === 'nest') {
      const cli: TestingModule = await CommandTestFactory.createTestingCommand({ imports: [fullCliModule()] }).overrideProvider(LIVENESS_PROBE).useValue(probe).compile();
      root = { name: kind, probe, run: (argv) => CommandTestFactory.run(cli, argv), close: () => cli.close() };
    } else {
      const seams = plainRoot({ probe });
      root = {
        name: kind,
        probe,
        run: async (argv) => {
          expect(await runHotCommand(argv, seams)).toBe(true);
        },
        close: async () => undefined,
      };
    }
  });

  beforeEach(() => {
    out = [];
    writeSpy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });

  afterEach(() => writeSpy.mockRestore());

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
});
