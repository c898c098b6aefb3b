import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { AgentError, DIVERSIFICATION_STATE_FILE, DiversificationPolicy, weightedPick } from '@app/agents';

const agents = { claude: { type: 'claude' }, codex: { type: 'codex' }, gemini: { type: 'gemini' } };
const configWith = (diversification: Record<string, unknown>) => ({ agents, defaults: { diversification } });

describe('DiversificationPolicy', () => {
  let task: string;
  beforeEach(() => (task = mkdtempSync(join(tmpdir(), 'agents-div-'))));
  afterEach(() => rmSync(task, { recursive: true, force: true }));

  it('is off unless enabled', () => {
    expect(DiversificationPolicy.fromConfig({ agents })).toBeUndefined();
    expect(DiversificationPolicy.fromConfig(configWith({ enabled: false }))).toBeUndefined();
  });

  it('round-robin rotates across separate policy objects through the task state file (D3)', async () => {
    const picks: string[] = [];
    for (let i = 0; i < 5; i++) {
      // A fresh policy each time, as each run-agent process builds its own.
      const policy = DiversificationPolicy.fromConfig(configWith({ enabled: true }))!;
      picks.push(await policy.next(task));
    }
    expect(picks).toEqual(['claude', 'codex', 'gemini', 'claude', 'codex']);
    const state = parse(readFileSync(join(task, DIVERSIFICATION_STATE_FILE), 'utf8'));
    expect(state).toMatchObject({ strategy: 'round-robin', agents: ['claude', 'codex', 'gemini'], picks: 5, last_agent: 'codex' });
  });

  it('keeps rotations of different tasks independent', async () => {
    const other = mkdtempSync(join(tmpdir(), 'agents-div-other-'));
    try {
      const policy = DiversificationPolicy.fromConfig(configWith({ enabled: true, agents: ['gemini', 'claude'] }))!;
      expect(await policy.next(task)).toBe('gemini');
      expect(await policy.next(task)).toBe('claude');
      expect(await policy.next(other)).toBe('gemini');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('hands out distinct positions to concurrent callers', async () => {
    const policy = DiversificationPolicy.fromConfig(configWith({ enabled: true }))!;
    const picks = await Promise.all(Array.from({ length: 6 }, () => new DiversificationPolicy(policy.strategy, policy.agents, policy.weights, false).next(task)));
    expect(picks.sort()).toEqual(['claude', 'claude', 'codex', 'codex', 'gemini', 'gemini']);
    expect(parse(readFileSync(join(task, DIVERSIFICATION_STATE_FILE), 'utf8')).picks).toBe(6);
  });

  it('continues a rotation written by another process', async () => {
    // Another process left this state behind (a YAML file is all they share).
    writeFileSync(join(task, DIVERSIFICATION_STATE_FILE), 'strategy: round-robin\nagents: [claude, codex, gemini]\npicks: 2\n');
    const policy = DiversificationPolicy.fromConfig(configWith({ enabled: true }))!;
    expect(await policy.next(task)).toBe('gemini');
    // ...and this process's write is visible to a separate one.
    const out = execFileSync(process.execPath, ['-e', `process.stdout.write(String(require('yaml').parse(require('fs').readFileSync(${JSON.stringify(join(task, DIVERSIFICATION_STATE_FILE))}, 'utf8')).picks))`], {
      cwd: join(__dirname, '..', '..', '..'),
    });
    expect(out.toString()).toBe('3');
  });

  it('starts afresh from a corrupt state file', async () => {
    writeFileSync(join(task, DIVERSIFICATION_STATE_FILE), ':: not yaml [');
    const policy = DiversificationPolicy.fromConfig(configWith({ enabled: true }))!;
    expect(await policy.next(task)).toBe('claude');
    expect(parse(readFileSync(join(task, DIVERSIFICATION_STATE_FILE), 'utf8')).picks).toBe(1);
  });

  it('weighted draws follow one seeded sequence across separate calls', async () => {
    const cfg = configWith({ enabled: true, strategy: 'weighted', agents: ['claude', 'codex'], weights: [3, 1] });
    const viaFile: string[] = [];
    for (let i = 0; i < 12; i++) viaFile.push(await DiversificationPolicy.fromConfig(cfg)!.next(task));
    let state = 42;
    const inMemory = Array.from({ length: 12 }, () => {
      const draw = weightedPick([3, 1], state);
      state = draw.state;
      return ['claude', 'codex'][draw.index];
    });
    expect(viaFile).toEqual(inMemory);
    expect(new Set(viaFile)).toEqual(new Set(['claude', 'codex']));
  });

  it('weighted draws honour the weights over many draws, deterministically per seed', () => {
    const draw = (seed: number, n: number) => {
      const counts = [0, 0, 0];
      const order: number[] = [];
      let state = seed;
      for (let i = 0; i < n; i++) {
        const d = weightedPick([6, 3, 1], state);
        state = d.state;
        counts[d.index]++;
        order.push(d.index);
      }
      return { counts, order };
    };
    const a = draw(42, 20000);
    expect(a.counts[0] / 20000).toBeGreaterThan(0.57);
    expect(a.counts[0] / 20000).toBeLessThan(0.63);
    expect(a.counts[1] / 20000).toBeGreaterThan(0.27);
    expect(a.counts[1] / 20000).toBeLessThan(0.33);
    expect(a.counts[2] / 20000).toBeGreaterThan(0.08);
    expect(a.counts[2] / 20000).toBeLessThan(0.12);
    expect(draw(42, 200).order).toEqual(a.order.slice(0, 200));
    expect(draw(7, 200).order).not.toEqual(a.order.slice(0, 200));
  });

  it('falls back to the next agent (round-robin) or the heaviest other one (weighted)', () => {
    const rr = DiversificationPolicy.fromConfig(configWith({ enabled: true, fallback_on_failure: true }))!;
    expect(rr.fallback('claude')).toBe('codex');
    expect(rr.fallback('gemini')).toBe('claude');
    expect(rr.fallback('unknown')).toBe('claude');
    const single = DiversificationPolicy.fromConfig(configWith({ enabled: true, agents: ['codex'], fallback_on_failure: true }))!;
    expect(single.fallback('codex')).toBeUndefined();
    const weighted = DiversificationPolicy.fromConfig(
      configWith({ enabled: true, strategy: 'weighted', agents: ['claude', 'codex', 'gemini'], weights: [5, 2, 2], fallback_on_failure: true }),
    )!;
    expect(weighted.fallback('claude')).toBe('codex');
    expect(weighted.fallback('codex')).toBe('claude');
    const noFallback = DiversificationPolicy.fromConfig(configWith({ enabled: true }))!;
    expect(noFallback.fallback('claude')).toBeUndefined();
  });

  it('does not touch the task folder when computing a fallback', () => {
    DiversificationPolicy.fromConfig(configWith({ enabled: true, fallback_on_failure: true }))!.fallback('claude');
    expect(existsSync(join(task, DIVERSIFICATION_STATE_FILE))).toBe(false);
  });

  it.each([
    [{ enabled: true, strategy: 'random' }, 'defaults.diversification.strategy "random" is invalid; valid values: round-robin, weighted'],
    [{ enabled: true, agents: ['claude', ''] }, 'defaults.diversification.agents[1] is empty'],
    [{ enabled: true, agents: ['claude', 'copilot'] }, 'defaults.diversification.agents[1] "copilot" not found in agents map'],
    [{ enabled: true, strategy: 'weighted', agents: ['claude', 'codex'], weights: [1] }, 'defaults.diversification.weights length (1) must match agents length (2)'],
    [{ enabled: true, strategy: 'weighted', agents: ['claude', 'codex'], weights: [1, 0] }, 'defaults.diversification.weights[1] must be positive, got 0'],
  ])('rejects invalid settings %#', (settings, message) => {
    let caught: unknown;
    try {
      DiversificationPolicy.fromConfig(configWith(settings));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AgentError);
    expect(caught).toMatchObject({ code: 'INVALID_CONFIG', message });
  });
});
