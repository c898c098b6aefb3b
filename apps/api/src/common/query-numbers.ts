import { badRequest } from './api-error';

/** Largest `tail=` accepted (lines). */
export const MAX_TAIL_LINES = 1_000_000;

/**
 * A non-negative integer query parameter in [0, max]; undefined when absent or empty. Anything
 * else (`-1`, `abc`, `1.5`, `1e308`, `0x10`, over max) → 400 naming the parameter and the rule.
 */
export function parseCountQuery(text: string | undefined, name: string, max: number): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (typeof text !== 'string' || !/^\d{1,16}$/.test(text) || Number(text) > max) {
    throw badRequest(`${name} must be a non-negative integer not above ${max}`, { [name]: `must be an integer between 0 and ${max}` });
  }
  return Number(text);
}
