/**
 * Schedules run by real server processes (docs/triggers.md): once per slot across a restart, with
 * the missed-run policy applied to the slots that passed while the server was down.
 * Needs `npm run build` (bin/conductor, bin/run-agent).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getJson, RUN_AGENT, runCli, RunningServer, serverEnv, startConductor, waitFor, writeConfig, writeFakeAgent } from '../server/helpers';

interface Run {
  slot?: string;
  task_id?: string;
  outcome: string;
}

const CRON_EVERY_2S = '"*/2 * * * * *"';

// concurrency replace: a slot (or a fire) never meets a busy schedule as skip would, however slow the agent on a loaded machine
function scheduleConfig(dir: string, missed: string): string {
  const extra = `schedules:\n  tick:\n    cron: ${CRON_EVERY_2S}\n    missed: ${missed}\n    max_missed: 50\n    concurrency: replace\n    task:\n      project: sched\n      prompt: scheduled work\n`;
  return writeConfig(dir, writeFakeAgent(dir), extra);
}

function history(root: string): Run[] {
  const file = join(root, '.triggers', 'schedules', 'tick.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { history: Run[] }).history : [];
}

const fired = (runs: Run[]) => runs.filter((r) => r.task_id && r.slot);

describe('schedules across a server restart', () => {
  let dir: string;
  let root: string;
  let server: RunningServer | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sched-e2e-'));
    root = join(dir, 'runs');
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the server until it fired two slots, stops it, waits until two more slots passed, restarts it. */
  async function runAcrossRestart(config: string): Promise<{ beforeStop: Run[]; lastBeforeStop: number }> {
    server = await startConductor(dir, root, config);
    await waitFor('two slots fired', () => fired(history(root)).filter((r) => r.outcome !== 'claimed').length >= 2);
    await server.stop();
    server = undefined;
    const beforeStop = history(root);
    const lastBeforeStop = Math.max(...beforeStop.map((r) => Date.parse(r.slot!)));
    // the event waited for: two cron slots have passed while no server ran
    await waitFor('two slots missed', () => Date.now() > lastBeforeStop + 4500);
    server = await startConductor(dir, root, config);
    return { beforeStop, lastBeforeStop };
  }

  it('run_all: every slot fires exactly once, the missed ones after the restart, and history shows each', async () => {
    const config = scheduleConfig(dir, 'run_all');
    const { lastBeforeStop } = await runAcrossRestart(config);
    const liveAfter = () => fired(history(root)).filter((r) => Date.parse(r.slot!) > lastBeforeStop + 4500);
    await waitFor('two live slots after the restart', () => liveAfter().filter((r) => r.outcome !== 'claimed').length >= 2);
    await server!.stop();
    server = undefined;

    const runs = fired(history(root));
    const slots = runs.map((r) => Date.parse(r.slot!));
    expect(new Set(slots).size).toBe(slots.length); // no slot twice
    expect(new Set(runs.map((r) => r.task_id)).size).toBe(runs.length);
    for (let i = 1; i < slots.length; i++) expect(slots[i] - slots[i - 1]).toBe(2000); // no slot left out
    expect(slots.filter((s) => s > lastBeforeStop && s <= lastBeforeStop + 4000)).toHaveLength(2); // the missed ones ran
    for (const r of runs) expect(['started', 'queued', 'skipped_running']).toContain(r.outcome);
    for (const r of runs.filter((x) => x.outcome === 'started')) expect(existsSync(join(root, 'sched', r.task_id!, 'TASK.md'))).toBe(true);

    // the same history through the CLI, offline (no server)
    const list = await runCli(RUN_AGENT, ['schedule', 'list', '--config', config, '--root', root, '--json'], serverEnv(dir));
    expect(list.code).toBe(0);
    const view = JSON.parse(list.stdout).schedules[0];
    expect(view.name).toBe('tick');
    expect(Date.parse(view.next_fire)).toBeGreaterThan(Date.parse(view.last_slot));
    expect(fired(view.history).map((r: Run) => r.slot)).toEqual(runs.map((r) => r.slot));
  });

  it('skip: the slots missed while down are recorded as skipped and start no task', async () => {
    const config = scheduleConfig(dir, 'skip');
    const { beforeStop, lastBeforeStop } = await runAcrossRestart(config);
    await waitFor('a live slot after the restart', () => fired(history(root)).some((r) => Date.parse(r.slot!) > lastBeforeStop + 4500 && r.outcome !== 'claimed'));
    const runs = history(root);
    const missed = runs.filter((r) => r.outcome === 'skipped_missed');
    expect(missed.length).toBeGreaterThanOrEqual(2);
    for (const r of missed) {
      expect(r.task_id).toBeUndefined();
      expect(Date.parse(r.slot!)).toBeGreaterThan(lastBeforeStop);
    }
    const slots = runs.map((r) => r.slot);
    expect(new Set(slots).size).toBe(slots.length);
    expect(runs.slice(0, beforeStop.length)).toEqual(beforeStop); // what was fired before the stop is not fired again

    // fire now through the API: a task outside the slots, in the same history
    const fire = await getJson(`${server!.url}/api/v1/schedules/tick/fire`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(fire.status).toBe(201);
    expect(fire.body.run.slot).toBeUndefined();
    expect(fire.body.run.task_id).toMatch(/^task-\d{8}-\d{6}-tick-m[a-z0-9]{4}$/);
    const list = await getJson(`${server!.url}/api/v1/schedules`);
    expect(list.body.schedules[0].history.map((r: Run) => r.task_id)).toContain(fire.body.run.task_id);
    expect((await getJson(`${server!.url}/api/v1/schedules/nope/fire`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status).toBe(404);
  });
});
