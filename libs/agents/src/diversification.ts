import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml, stringifyYaml, withFileLock, writeFileAtomic } from '@app/storage';
import { AgentError } from './agents.errors';
import { isRecord } from './parsers/lines';

/** `defaults.diversification` of the config. */
export interface DiversificationSettings {
  enabled?: boolean;
  strategy?: string;
  agents?: string[];
  weights?: number[];
  fallback_on_failure?: boolean;
}

export type DiversificationStrategy = 'round-robin' | 'weighted';

/** Per-task rotation state, so that separate runs and processes continue the rotation (D3). */
export const DIVERSIFICATION_STATE_FILE = 'DIVERSIFICATION-STATE.yaml';
export const DEFAULT_DIVERSIFICATION_SEED = 42;
const STATE_LOCK_TIMEOUT_MS = 5000;

interface PersistedState {
  picks: number;
  rngState?: number;
}

/**
 * Chooses the agent of each attempt of a task when diversification is enabled and no explicit
 * agent was requested. Unlike upstream (which rebuilt the policy per run and so always picked the
 * first agent), the position is persisted in `<task>/DIVERSIFICATION-STATE.yaml` under a file
 * lock: round-robin really rotates, weighted continues one seeded random sequence.
 */
export class DiversificationPolicy {
  constructor(
    readonly strategy: DiversificationStrategy,
    readonly agents: readonly string[],
    readonly weights: readonly number[],
    readonly fallbackOnFailure: boolean,
    readonly seed: number = DEFAULT_DIVERSIFICATION_SEED,
  ) {
    if (agents.length === 0) throw new AgentError('INVALID_CONFIG', 'diversification: no agents available after resolution');
    if (weights.length !== agents.length) {
      throw new AgentError('INVALID_CONFIG', `defaults.diversification.weights length (${weights.length}) must match agents length (${agents.length})`);
    }
  }

  /** The policy of a config, or undefined when diversification is off. */
  static fromConfig(
    config: { agents: Record<string, unknown>; defaults?: { diversification?: DiversificationSettings } },
    opts: { seed?: number } = {},
  ): DiversificationPolicy | undefined {
    const d = config.defaults?.diversification;
    if (!d?.enabled) return undefined;
    const strategy = (d.strategy ?? '').trim().toLowerCase() || 'round-robin';
    if (strategy !== 'round-robin' && strategy !== 'weighted') {
      throw new AgentError('INVALID_CONFIG', `defaults.diversification.strategy "${d.strategy}" is invalid; valid values: round-robin, weighted`);
    }
    const agents = d.agents && d.agents.length > 0 ? d.agents : Object.keys(config.agents ?? {}).sort();
    agents.forEach((name, i) => {
      if (name.trim() === '') throw new AgentError('INVALID_CONFIG', `defaults.diversification.agents[${i}] is empty`);
      if (!Object.prototype.hasOwnProperty.call(config.agents ?? {}, name)) {
        throw new AgentError('INVALID_CONFIG', `defaults.diversification.agents[${i}] "${name}" not found in agents map`);
      }
    });
    const weights = strategy === 'weighted' && d.weights && d.weights.length > 0 ? d.weights : agents.map(() => 1);
    weights.forEach((w, i) => {
      if (!Number.isInteger(w) || w <= 0) throw new AgentError('INVALID_CONFIG', `defaults.diversification.weights[${i}] must be positive, got ${w}`);
    });
    return new DiversificationPolicy(strategy, agents, weights, d.fallback_on_failure === true, opts.seed);
  }

  /** Picks the agent name for the next attempt of the task in `taskDir` and persists the new position. */
  async next(taskDir: string): Promise<string> {
    const path = join(taskDir, DIVERSIFICATION_STATE_FILE);
    return withFileLock(`${path}.lock`, { timeoutMs: STATE_LOCK_TIMEOUT_MS }, () => {
      const state = readState(path);
      let agent: string;
      let rngState = state.rngState;
      if (this.strategy === 'round-robin') {
        agent = this.agents[state.picks % this.agents.length];
      } else {
        const draw = weightedPick(this.weights, rngState ?? this.seed);
        agent = this.agents[draw.index];
        rngState = draw.state;
      }
      writeState(path, { strategy: this.strategy, agents: this.agents, picks: state.picks + 1, rngState, lastAgent: agent });
      return agent;
    });
  }

  /**
   * The agent to retry with after `failed` failed: the next one in the list for round-robin, the
   * heaviest other one for weighted. Undefined when fallback is off or there is no other agent.
   */
  fallback(failed: string): string | undefined {
    if (!this.fallbackOnFailure) return undefined;
    if (this.strategy === 'round-robin') {
      const i = this.agents.indexOf(failed);
      if (i === -1) return this.agents.find((a) => a !== failed);
      const next = this.agents[(i + 1) % this.agents.length];
      return next === failed ? undefined : next;
    }
    let best: string | undefined;
    let bestWeight = -1;
    this.agents.forEach((name, i) => {
      if (name !== failed && this.weights[i] > bestWeight) {
        best = name;
        bestWeight = this.weights[i];
      }
    });
    return best;
  }
}

/**
 * One weighted draw from a seeded generator (mulberry32): returns the chosen index and the
 * generator state to use for the next draw.
 */
export function weightedPick(weights: readonly number[], rngState: number): { index: number; state: number } {
  const state = (rngState + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  const total = weights.reduce((a, b) => a + b, 0);
  const pick = Math.floor(unit * total);
  let cumulative = 0;
  for (let i = 0; i < weights.length; i++) {
    cumulative += weights[i];
    if (pick < cumulative) return { index: i, state };
  }
  return { index: weights.length - 1, state };
}

function readState(path: string): PersistedState {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch {
    return { picks: 0 }; // missing or unreadable: start the rotation afresh
  }
  if (!isRecord(doc)) return { picks: 0 };
  const picks = Number.isInteger(doc.picks) && (doc.picks as number) >= 0 ? (doc.picks as number) : 0;
  const rngState = Number.isInteger(doc.rng_state) ? (doc.rng_state as number) >>> 0 : undefined;
  return { picks, rngState };
}

function writeState(
  path: string,
  s: { strategy: string; agents: readonly string[]; picks: number; rngState?: number; lastAgent: string },
): void {
  const doc: Record<string, unknown> = {
    strategy: s.strategy,
    agents: [...s.agents],
    picks: s.picks,
    last_agent: s.lastAgent,
    updated_at: new Date().toISOString(),
  };
  if (s.rngState !== undefined) doc.rng_state = s.rngState;
  writeFileAtomic(path, `# conductor-loop diversification state (D3); safe to delete\n${stringifyYaml(doc)}`);
}
