import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ReplicaLivenessProbe } from '@app/scaleout';
import { RunsLayout, StorageIndex, writeRunInfo, ZERO_TIME } from '@app/storage';

describe('ReplicaLivenessProbe', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'probe-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function replicatedRunningRun(): string {
    // a pid that existed on this host and is gone: on a replica it belongs to a worker host
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const dir = join(root, 'p', 'task-20260101-000000-abc', 'runs', '20260101-0000000000-1-1');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'run-info.yaml');
    writeRunInfo(file, {
      version: 1, run_id: '20260101-0000000000-1-1', project_id: 'p', task_id: 'task-20260101-000000-abc', agent: 'codex',
      pid: Number(dead), pgid: Number(dead), start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
    });
    return file;
  }

  it('leaves replicated running runs as the worker wrote them', () => {
    const file = replicatedRunningRun();
    const before = readFileSync(file);
    const infos = new StorageIndex(new RunsLayout(root), new ReplicaLivenessProbe()).runInfos('p');
    expect(infos.map((i) => i.status)).toEqual(['running']);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('differs from the local probe, which would reconcile the dead pid', () => {
    replicatedRunningRun();
    const infos = new StorageIndex(new RunsLayout(root)).runInfos('p');
    expect(infos.map((i) => i.status)).not.toEqual(['running']);
  });
});
