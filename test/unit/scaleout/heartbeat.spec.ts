import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeartbeat, HeartbeatLivenessProbe, HeartbeatTable, readReplicaRunInfo } from '@app/scaleout';
import { writeRunInfo, ZERO_TIME } from '@app/storage';

const P = 'p';
const T = 'task-20260101-000000-abc';
const enc = (o: unknown) => Buffer.from(JSON.stringify(o));

describe('worker heartbeats (liveness of replicated runs)', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 1_000_000));

  it('a task is alive while a fresh heartbeat lists it, dead once the lease passed', () => {
    const table = new HeartbeatTable(30_000, now);
    clock += 30_001; // past the start-up grace
    expect(table.taskAlive(P, T)).toBe(false);
    table.record({ host: 'w1', tasks: [`${P}/${T}`], leaseMs: 3000 });
    expect(table.taskAlive(P, T)).toBe(true);
    expect(table.taskAlive(P, 'task-20260101-000000-other')).toBe(false);
    clock += 3001;
    expect(table.taskAlive(P, T)).toBe(false);
    table.record({ host: 'w1', tasks: [], leaseMs: 3000 });
    expect(table.taskAlive(P, T)).toBe(false);
  });

  it('counts every task alive during one lease after the server started (heartbeats on their way)', () => {
    const table = new HeartbeatTable(30_000, now);
    expect(table.taskAlive(P, T)).toBe(true);
    // a task whose worker went silent is judged by that worker, grace or not
    table.record({ host: 'w1', tasks: [`${P}/${T}`], leaseMs: 3000 });
    clock += 3001;
    expect(table.taskAlive(P, T)).toBe(false);
    expect(table.taskAlive(P, 'task-20260101-000000-other')).toBe(true);
    clock += 30_000;
    expect(table.taskAlive(P, 'task-20260101-000000-other')).toBe(false);
  });

  it('decodes only well-formed heartbeats with valid host and task ids', () => {
    expect(decodeHeartbeat(enc({ host: 'w1', tasks: [`${P}/${T}`], leaseMs: 3000 }))).toEqual({ host: 'w1', tasks: [`${P}/${T}`], leaseMs: 3000 });
    for (const bad of [{ host: 'W 1', tasks: [], leaseMs: 1 }, { host: 'w1', tasks: ['../x/y'], leaseMs: 1 }, { host: 'w1', tasks: [`${P}/${T}/z`], leaseMs: 1 }, { host: 'w1', tasks: [], leaseMs: 0 }, { host: 'w1', tasks: 'x', leaseMs: 1 }]) {
      expect(decodeHeartbeat(enc(bad))).toBeUndefined();
    }
    expect(decodeHeartbeat(Buffer.from('not json'))).toBeUndefined();
  });

  describe('readReplicaRunInfo', () => {
    let root: string;
    let file: string;
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'hb-'));
      const dir = join(root, P, T, 'runs', '20260101-0000000000-1-1');
      mkdirSync(dir, { recursive: true });
      file = join(dir, 'run-info.yaml');
      // this very process: a pid alive on this host, which must not count for a replicated run
      writeRunInfo(file, {
        version: 1, run_id: '20260101-0000000000-1-1', project_id: P, task_id: T, agent: 'codex',
        pid: process.pid, pgid: process.pid, start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
      });
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('judges by the heartbeat, not by a local pid, and never writes the replica', () => {
      const table = new HeartbeatTable(0, now);
      const probe = new HeartbeatLivenessProbe(table);
      const before = readFileSync(file);
      clock += 1;
      expect(readReplicaRunInfo(file, probe).status).toBe('failed');
      table.record({ host: 'w1', tasks: [`${P}/${T}`], leaseMs: 3000 });
      expect(readReplicaRunInfo(file, probe).status).toBe('running');
      expect(readFileSync(file).equals(before)).toBe(true);
    });
  });
});
