import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { idempotencyDir, IDEMPOTENCY_WINDOW, PRUNE_INTERVAL_MS, pruneRecords, RecordPruner, sha256Hex, TaskStarter, TaskStartRequest, TriggerService, TriggersOptions } from '@app/triggers';

const HOUR = 3600_000;

/** A TaskStarter port that starts nothing real (the lib's only outside dependency). */
class CountingStarter implements TaskStarter {
  started: TaskStartRequest[] = [];
  async start(req: TaskStartRequest) {
    this.started.push(req);
    return { project_id: req.project_id, task_id: req.task_id, status: 'started' };
  }
  isActive() {
    return false;
  }
  async stop() {}
}

describe('pruning of idempotency and delivery records', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'trg-prune-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A record file whose modification time is `ageMs` before `now`. */
  const record = (folder: string, name: string, ageMs: number, now: number, text = '{}\n') => {
    mkdirSync(folder, { recursive: true });
    const path = join(folder, name);
    writeFileSync(path, text);
    utimesSync(path, new Date(now - ageMs), new Date(now - ageMs));
  };

  it('removes records older than the window and all but the newest maxCount; a damaged record goes like any other', () => {
    const now = Date.parse('2026-11-28T12:00:00Z');
    record(dir, 'a.json', 0, now);
    record(dir, 'b.json', 1 * HOUR, now);
    record(dir, 'c.json', 2 * HOUR, now, 'not json');
    record(dir, 'd.json', 3 * HOUR, now);
    record(dir, 'old.json', 30 * HOUR, now, 'not json either');
    record(dir, 'notes.txt', 30 * HOUR, now);
    expect(pruneRecords(dir, { maxAgeMs: 24 * HOUR, maxCount: 3 }, now)).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.json', 'c.json', 'notes.txt']);
    expect(pruneRecords(join(dir, 'missing'), IDEMPOTENCY_WINDOW, now)).toBe(0);
  });

  it('prunes a folder at most once per interval', () => {
    const now = Date.parse('2026-11-28T12:00:00Z');
    const pruner = new RecordPruner({ maxAgeMs: HOUR, maxCount: 100 });
    pruner.maybePrune(dir, now);
    record(dir, 'old.json', 2 * HOUR, now);
    pruner.maybePrune(dir, now + PRUNE_INTERVAL_MS - 1);
    expect(readdirSync(dir)).toEqual(['old.json']);
    pruner.maybePrune(dir, now + PRUNE_INTERVAL_MS);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an HTTP trigger drops keys older than the window: the old key starts a new task, a recent one still replays', async () => {
    const root = join(dir, 'runs');
    const token = 'the-trigger-token';
    const opts: TriggersOptions = {
      root,
      schedules: {},
      triggers: { deploy: { name: 'deploy', token_sha256: createHash('sha256').update(token).digest('hex'), rate_per_minute: 100, max_payload_bytes: 1000, task: { project_id: 'p1', prompt: 'go', agent_type: '' } } },
      runSchedules: false,
    };
    const starter = new CountingStarter();
    const first = new TriggerService(opts, starter);
    await first.invoke({ name: 'deploy', token, payload: {}, idempotencyKey: 'old-key' });
    await first.invoke({ name: 'deploy', token, payload: {}, idempotencyKey: 'recent-key' });
    const folder = idempotencyDir(root, 'deploy');
    expect(readdirSync(folder)).toHaveLength(2);
    const aged = new Date(Date.now() - IDEMPOTENCY_WINDOW.maxAgeMs - HOUR);
    utimesSync(join(folder, `${sha256Hex('old-key')}.json`), aged, aged);

    const restarted = new TriggerService(opts, starter); // a restarted server prunes on its first keyed call
    expect((await restarted.invoke({ name: 'deploy', token, payload: {}, idempotencyKey: 'recent-key' })).replayed).toBe(true);
    await restarted.invoke({ name: 'deploy', token, payload: {}, idempotencyKey: 'new-key' });
    expect(readdirSync(folder)).not.toContain(`${sha256Hex('old-key')}.json`);
    const again = await restarted.invoke({ name: 'deploy', token, payload: {}, idempotencyKey: 'old-key' });
    expect(again.replayed).toBe(false);
    expect(starter.started).toHaveLength(4);
  });
});
