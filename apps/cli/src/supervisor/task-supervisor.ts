/**
 * The host's task supervisor (issue #33, docs/operations.md, "the task supervisor"): one long-lived process that runs
 * the Ralph loops of many `run-agent task` clients (bin/task-client.js), so sixty tasks cost one
 * runner, not sixty; sub-agents' `run-agent job` calls too, so a tree of 200 costs one. Started on
 * demand by a client, it serves one environment (less the per-run variables, which each request
 * brings: per-run-env.ts) and working directory (the socket's name says which, so the loops see
 * exactly what an in-process `task` or `job` would), and exits once it has been idle for
 * RUN_AGENT_SUPERVISOR_IDLE_MS (default 15 s).
 *
 * The socket's owner holds its claim (`claimSocketPath`): a second supervisor started for the same
 * socket exits at once, and the claim is dropped before the socket is removed, so a client that
 * finds no socket can always start the next one.
 */
import { createServer, type Server } from 'node:net';
import { claimSocketPath } from '@app/storage';
import { plainRoot } from '../fast/plain-root';
import { dropPerRunVariables } from './per-run-env';
import { serveTaskClient } from './supervisor-connection';

export const DEFAULT_IDLE_MS = 15_000;

function idleMs(env: NodeJS.ProcessEnv): number {
  const raw = Number(env.RUN_AGENT_SUPERVISOR_IDLE_MS);
  return Number.isInteger(raw) && raw >= 0 ? raw : DEFAULT_IDLE_MS;
}

/** Serves `socketPath` until idle; resolves once listening (or at once when another supervisor owns the path). */
export async function superviseTasks(socketPath: string): Promise<void> {
  const claim = claimSocketPath(socketPath);
  if (!claim) return log(`another supervisor owns ${socketPath}; exiting`);
  // the first client's run variables are not the next one's: every command reads its client's
  dropPerRunVariables(process.env);
  const root = plainRoot();
  let active = 0;
  let idle: NodeJS.Timeout | undefined;
  let closing = false;
  const server: Server = createServer((conn) => {
    active++;
    if (idle) clearTimeout(idle);
    void serveTaskClient(conn, root).finally(() => {
      active--;
      if (closing && active === 0) process.exit(0);
      if (active === 0) armIdle();
    });
  });
  const armIdle = () => {
    idle = setTimeout(() => {
      closing = true;
      server.close();
      claim.release();
      root.close();
      log('idle; exiting');
      if (active === 0) process.exit(0);
    }, idleMs(process.env));
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  claim.listening();
  log(`serving ${socketPath} (pid ${process.pid}, cwd ${process.cwd()})`);
  armIdle();
}

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} task-supervisor: ${line}\n`);
}
