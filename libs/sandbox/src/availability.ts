import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type SandboxCheck = { ok: true; bwrap: string } | { ok: false; reason: string };

/** The first executable `bwrap` on PATH. */
export function findBwrap(path: string | undefined): string | undefined {
  return findOnPath('bwrap', path);
}

/** The first executable `name` on PATH. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

/**
 * Whether bwrap sandboxes work here: bwrap on PATH and a trial sandbox (read-only root, new
 * pid and network namespaces) that runs `true`. The reason is one line.
 */
export function checkSandbox(env: NodeJS.ProcessEnv = process.env): SandboxCheck {
  const bwrap = findBwrap(env.PATH);
  if (!bwrap) return { ok: false, reason: 'bwrap not found on PATH (install bubblewrap)' };
  const trial = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-net', '--die-with-parent', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
    env: { PATH: env.PATH ?? '' },
  });
  if (trial.error) return { ok: false, reason: `bwrap trial failed: ${trial.error.message}` };
  if (trial.status !== 0) {
    const why = (trial.stderr ?? '').trim().split('\n')[0] || `exit status ${trial.status}`;
    return { ok: false, reason: `bwrap trial failed (user namespaces unavailable?): ${why}` };
  }
  return { ok: true, bwrap };
}

let cached: { path: string; result: SandboxCheck } | undefined;

/** checkSandbox, remembered per PATH for this process (a run's start pays for the trial once). */
export function checkSandboxCached(env: NodeJS.ProcessEnv = process.env): SandboxCheck {
  const path = env.PATH ?? '';
  if (cached?.path === path && cached.result.ok) return cached.result;
  const result = checkSandbox(env);
  cached = { path, result };
  return result;
}

/**
 * The system's perl (Debian's essential perl-base), which starts the egress forwarder without the
 * agent waiting for node (docs/decisions/sandbox-egress-start.md); undefined when there is none
 * (the slower start is used). Only the system's own: a perl in the home would be hidden inside.
 */
export function systemPerl(): string | undefined {
  for (const candidate of ['/usr/bin/perl', '/bin/perl']) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}
