import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusWriter, readMessages } from '@app/messagebus';
import { referenceRead } from '../messagebus/reference-reader';
import {
  claimOwnerEpoch,
  isStaleEpoch,
  OWNER_EPOCH_FILE,
  parseRunInfo,
  readOwnerEpoch,
  readRunInfo,
  RunInfo,
  serializeRunInfo,
  StaleEpochError,
  updateRunInfo,
  writeRunInfo,
  ZERO_TIME,
} from '@app/storage';

const info = (runId: string): RunInfo => ({
  version: 1,
  run_id: runId,
  project_id: 'p',
  task_id: 'task-20260101-000000-epoch',
  agent: 'claude',
  pid: 1234,
  pgid: 1234,
  start_time: new Date('2026-01-01T00:00:00Z'),
  end_time: ZERO_TIME,
  exit_code: -1,
  status: 'running',
  agent_version: '',
});

describe('fencing epochs (issue #31, libs/storage/src/owner-epoch.ts)', () => {
  let taskDir: string;
  let runInfo: string;
  let bus: string;
  beforeEach(() => {
    taskDir = join(mkdtempSync(join(tmpdir(), 'owner-epoch-')), 'task-20260101-000000-epoch');
    mkdirSync(join(taskDir, 'runs', 'run-1'), { recursive: true });
    runInfo = join(taskDir, 'runs', 'run-1', 'run-info.yaml');
    bus = join(taskDir, 'TASK-MESSAGE-BUS.md');
  });
  afterEach(() => rmSync(join(taskDir, '..'), { recursive: true, force: true }));

  it('every claim increments the durable epoch record; a folder never claimed reads 0', () => {
    expect(readOwnerEpoch(taskDir)).toBe(0);
    const first = claimOwnerEpoch(taskDir, 'loop');
    const second = claimOwnerEpoch(taskDir, 'takeover');
    expect([first.epoch, second.epoch, readOwnerEpoch(taskDir)]).toEqual([1, 2, 2]);
    expect(readFileSync(join(taskDir, OWNER_EPOCH_FILE), 'utf8')).toMatch(new RegExp(`^epoch: 2\nclaimed_by: takeover\npid: ${process.pid}\nclaimed_at: \\S+Z\n$`));
    expect(first.isCurrent()).toBe(false);
    expect(second.isCurrent()).toBe(true);
    expect(() => first.check()).toThrow(StaleEpochError);
    first.close();
    second.close();
  });

  it('the run-info writers stamp the owner epoch and refuse a stale owner, leaving the file byte-identical', async () => {
    const old = claimOwnerEpoch(taskDir, 'loop');
    writeRunInfo(runInfo, info('run-1'), { fence: old });
    expect(readRunInfo(runInfo).owner_epoch).toBe(1);
    const claimant = claimOwnerEpoch(taskDir, 'adopt');
    const before = readFileSync(runInfo);

    let refused: unknown;
    try {
      writeRunInfo(runInfo, { ...info('run-1'), status: 'failed' }, { fence: old });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(StaleEpochError);
    expect((refused as StaleEpochError).code).toBe('STALE_EPOCH');
    expect((refused as Error).message).toContain('holds epoch 1');
    await expect(updateRunInfo(runInfo, (i) => ({ ...i, status: 'completed' }), { fence: old })).rejects.toThrow('but the task was claimed since (epoch 2)');
    expect(readFileSync(runInfo)).toEqual(before);

    const closed = await updateRunInfo(runInfo, (i) => ({ ...i, status: 'completed', exit_code: 0 }), { fence: claimant });
    expect([closed.owner_epoch, readRunInfo(runInfo).owner_epoch, readRunInfo(runInfo).status]).toEqual([2, 2, 'completed']);
    old.close();
    claimant.close();
  });

  it('owner_epoch is an added run-info key: written after the upstream keys, read back, absent when 0', () => {
    const text = serializeRunInfo({ ...info('run-1'), owner_epoch: 7 });
    expect(text.endsWith('agent_version: ""\nowner_epoch: 7\n')).toBe(true);
    expect(parseRunInfo(text).owner_epoch).toBe(7);
    expect(serializeRunInfo(info('run-1'))).not.toContain('owner_epoch');
    expect(parseRunInfo('run_id: r\nowner_epoch: x\n').owner_epoch).toBeUndefined();
  });

  it('a fenced bus writer puts owner_epoch in every record header; a stale one appends nothing', async () => {
    const old = claimOwnerEpoch(taskDir, 'loop');
    const writer = new BusWriter(bus, { fence: old });
    const first = await writer.append({ type: 'INFO', project_id: 'p', task_id: 'task-20260101-000000-epoch', run_id: '', body: 'owner 1' });
    expect(first.owner_epoch).toBe(1);
    expect(readFileSync(bus, 'utf8')).toContain('\nowner_epoch: 1\n---\nowner 1\n');
    const claimant = claimOwnerEpoch(taskDir, 'resume');
    const before = readFileSync(bus);

    const refused = await writer.append({ type: 'INFO', project_id: 'p', task_id: 'task-20260101-000000-epoch', run_id: '', body: 'stale' }).catch((err: unknown) => err);
    expect(isStaleEpoch(refused)).toBe(true);
    expect(readFileSync(bus)).toEqual(before);

    await new BusWriter(bus, { fence: claimant }).append({ type: 'INFO', project_id: 'p', task_id: 'task-20260101-000000-epoch', run_id: '', body: 'owner 2' });
    // an unfenced writer (a user's bus post) is not an owner: never refused
    await new BusWriter(bus).append({ type: 'INFO', project_id: 'p', task_id: 'task-20260101-000000-epoch', run_id: '', body: 'user' });
    expect(readMessages(bus).map((m) => [m.body, m.owner_epoch])).toEqual([
      ['owner 1', 1],
      ['owner 2', 2],
      ['user', undefined],
    ]);
    // upstream's reader (cli-storage.md §4.4, yaml into a struct) ignores the added header key
    expect(referenceRead(readFileSync(bus, 'utf8')).map((m) => [m.type, m.body])).toEqual([
      ['INFO', 'owner 1\n'], // upstream's usual extra newline on a non-final body (format.ts)
      ['INFO', 'owner 2\n'],
      ['INFO', 'user'],
    ]);
    writer.close();
    old.close();
    claimant.close();
  });

  it('a claim from another process is blocked while the owner is inside a guarded write; after it, the claim makes that owner stale', async () => {
    const old = claimOwnerEpoch(taskDir, 'loop');
    await old.guardAsync(async () => {
      // another process claims while this owner is inside its write
      const child = spawnSync(process.execPath, ['-e', CLAIM_SCRIPT, taskDir], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' } });
      expect(child.stdout.trim()).toMatch(/^CLAIM_BLOCKED /);
      writeRunInfo(runInfo, info('run-1'));
    });
    expect(readRunInfo(runInfo).run_id).toBe('run-1');
    const claimed = claimOwnerEpoch(taskDir, 'takeover');
    expect([claimed.epoch, old.isCurrent()]).toEqual([2, false]);
    claimed.close();
    old.close();
  });
});

/** A second process trying to claim (exclusive fence lock) without waiting long: prints what happened. */
const CLAIM_SCRIPT = `
const { openSync } = require('node:fs');
const { join } = require('node:path');
const { flockSync } = require('fs-ext');
const fd = openSync(join(process.argv[1], 'OWNER-EPOCH.lock'), 'a+');
try { flockSync(fd, 'exnb'); console.log('CLAIMED'); } catch (e) { console.log('CLAIM_BLOCKED ' + e.code); }
`;
