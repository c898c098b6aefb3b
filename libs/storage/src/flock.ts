/**
 * flock(2) through the native `fs-ext` addon, loaded on the first lock: loading the addon costs
 * ~2 ms, which read-only commands (`status`, `list`, `output`) never need to pay
 * (docs/decisions/startup-and-memory.md).
 */
type FlockMode = 'sh' | 'ex' | 'shnb' | 'exnb' | 'un';

let native: ((fd: number, flags: FlockMode) => void) | undefined;

export function flockSync(fd: number, flags: FlockMode): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  native ??= (require('fs-ext') as typeof import('fs-ext')).flockSync;
  native(fd, flags);
}
