export type HeartbeatColour = 'green' | 'yellow' | 'red';

/** Output within this long counts as fresh (green); up to STALE_MS it is yellow, then red. */
export const FRESH_MS = 30_000;
export const STALE_MS = 120_000;

/** Colour of a running run's heartbeat badge from the time since its last output (or start). */
export function heartbeatColour(lastOutputAt: number, now: number): HeartbeatColour {
  const age = now - lastOutputAt;
  if (age <= FRESH_MS) return 'green';
  if (age <= STALE_MS) return 'yellow';
  return 'red';
}
