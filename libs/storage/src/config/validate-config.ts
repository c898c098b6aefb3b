import { readFileSync, statSync } from 'node:fs';
import { AGENT_TYPES, AppConfig, isLogLevel, LOG_LEVELS } from './config.types';
import { parseGoDuration } from './duration';
import { standardWebhooksKey } from './webhook-secret';

class ValidationProblem extends Error {
  constructor(
    message: string,
    readonly key?: (string | number)[],
  ) {
    super(message);
  }
}

export interface ValidateOptions {
  /** A run needs agents and readable token files; the server and root lookups do not (default true). */
  strict?: boolean;
}

const q = (s: string) => JSON.stringify(s);

function tokenFileProblem(path: string): string | undefined {
  try {
    const st = statSync(path);
    if (!st.isFile()) return 'not a regular file';
    readFileSync(path);
    return undefined;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return e.code === 'ENOENT' ? `stat ${path}: no such file or directory` : e.message;
  }
}

/** Go's url.ParseRequestURI, approximately: an absolute URI with a scheme, or an absolute path. */
function checkRequestUri(url: string): string | undefined {
  if (url.startsWith('/')) return undefined;
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(url)) return `parse ${q(url)}: invalid URI for request`;
  try {
    new URL(url);
    return undefined;
  } catch {
    return `parse ${q(url)}: invalid URI for request`;
  }
}

/**
 * §5.3 validation with upstream's exact messages (agents checked in name order). Throws an Error
 * that names the key (`validationKey`). Lenient (`strict: false`) skips only what a run needs:
 * at least one agent and readable token files.
 */
export function validateConfig(cfg: AppConfig, opts: ValidateOptions = {}): void {
  const strict = opts.strict ?? true;
  const fail = (msg: string, key?: (string | number)[]): never => {
    throw new ValidationProblem(msg, key);
  };
  if (strict && Object.keys(cfg.agents).length === 0) fail('no agents configured', ['agents']);
  // Upstream requires a positive timeout it never uses; we only refuse nonsense (0 or absent = unset).
  if (cfg.defaults.timeout < 0) fail('defaults.timeout must be positive', ['defaults', 'timeout']);
  if (cfg.storage.max_message_body_bytes < 0) fail('storage.max_message_body_bytes must not be negative', ['storage', 'max_message_body_bytes']);
  if (cfg.api.max_request_body_bytes < 0) fail('api.max_request_body_bytes must not be negative', ['api', 'max_request_body_bytes']);
  if (cfg.api.log_level && !isLogLevel(cfg.api.log_level)) fail(`api.log_level ${q(cfg.api.log_level)} is invalid; valid values: ${LOG_LEVELS.join(', ')}`, ['api', 'log_level']);
  if (cfg.defaults.max_concurrent_root_tasks < 0) fail('defaults.max_concurrent_root_tasks must be non-negative', ['defaults', 'max_concurrent_root_tasks']);
  for (const key of ['poll_interval_ms', 'discovery_interval_ms', 'heartbeat_interval_s', 'max_clients_per_run'] as const) {
    if (cfg.api.sse[key] < 0) fail(`api.sse.${key} must be non-negative`, ['api', 'sse', key]);
  }
  for (const name of Object.keys(cfg.agents).sort()) {
    const agent = cfg.agents[name];
    if (agent.type === '') fail(`agent ${q(name)} has empty type`, ['agents', name, 'type']);
    if (!(AGENT_TYPES as readonly string[]).includes(agent.type)) fail(`agent ${q(name)} has invalid type ${q(agent.type)}`, ['agents', name, 'type']);
    if (agent.token && agent.token_file) fail(`agent ${q(name)} cannot set both token and token_file`, ['agents', name, 'token_file']);
    if (agent.token_file && strict) {
      const problem = tokenFileProblem(agent.token_file);
      if (problem) fail(`agent ${q(name)} token_file ${q(agent.token_file)}: ${problem}`, ['agents', name, 'token_file']);
    }
    if (agent.type === 'command' && !(agent.command ?? '').trim()) fail(`agent ${q(name)} of type "command" needs a command`, ['agents', name, 'command']);
  }
  if (cfg.api.port < 0 || cfg.api.port > 65535) fail('api.port must be between 0 and 65535', ['api', 'port']);
  if (cfg.webhook) {
    if (cfg.webhook.url) {
      const problem = checkRequestUri(cfg.webhook.url);
      if (problem) fail(`webhook.url is invalid: ${problem}`, ['webhook', 'url']);
    }
    if (cfg.webhook.standard_webhooks_secret && !standardWebhooksKey(cfg.webhook.standard_webhooks_secret)) {
      fail('webhook.standard_webhooks_secret must be whsec_ followed by the base64 of 24 to 64 bytes', ['webhook', 'standard_webhooks_secret']);
    }
    if (cfg.webhook.timeout) {
      try {
        parseGoDuration(cfg.webhook.timeout);
      } catch (err) {
        fail(`webhook.timeout is invalid: ${(err as Error).message}`, ['webhook', 'timeout']);
      }
    }
  }
  const d = cfg.defaults.diversification;
  if (d) {
    const strategy = d.strategy.trim();
    if (strategy !== '' && strategy !== 'round-robin' && strategy !== 'weighted') {
      fail(`defaults.diversification.strategy ${q(strategy)} is invalid; valid values: round-robin, weighted`, ['defaults', 'diversification', 'strategy']);
    }
    d.agents.forEach((name, i) => {
      if (name.trim() === '') fail(`defaults.diversification.agents[${i}] is empty`, ['defaults', 'diversification', 'agents', i]);
      if (!cfg.agents[name]) fail(`defaults.diversification.agents[${i}] ${q(name)} not found in agents map`, ['defaults', 'diversification', 'agents', i]);
    });
    if (d.weights.length > 0) {
      if (d.weights.length !== d.agents.length) {
        fail(`defaults.diversification.weights length (${d.weights.length}) must match agents length (${d.agents.length})`, ['defaults', 'diversification', 'weights']);
      }
      d.weights.forEach((w, i) => {
        if (w <= 0) fail(`defaults.diversification.weights[${i}] must be positive, got ${w}`, ['defaults', 'diversification', 'weights', i]);
      });
    }
  }
}

export function isValidationProblem(err: unknown): err is ValidationProblem {
  return err instanceof ValidationProblem;
}
