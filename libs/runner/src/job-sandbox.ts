import { dirname } from 'node:path';
import { runAgentBinDir } from '@app/agents';
import { EgressDecision, openSandbox, OpenSandbox } from '@app/sandbox';
import { ExecContext, post } from './job-finish';
import { writeEgressBytes } from './usage/egress-bytes';

export type RunSandbox = OpenSandbox;

/**
 * `sandbox: bwrap` (docs/sandbox.md): the run's egress proxy and bwrap command line; undefined for
 * `none`. Throws SandboxUnavailableError when bwrap cannot run (the agent never starts unconfined).
 * Denials are posted as EGRESS_DENIED each time, allowed destinations as EGRESS_ALLOWED once.
 */
export async function openRunSandbox(ctx: ExecContext, command: string, args: string[]): Promise<RunSandbox | undefined> {
  if (ctx.sandbox !== 'bwrap') return undefined;
  const agentName = ctx.info.agent_name;
  const agent = (agentName ? ctx.opts.config?.agents[agentName] : undefined) ?? { type: ctx.spec.type };
  const seen = new Set<string>();
  const pending = new Set<Promise<void>>();
  const onDecision = (d: EgressDecision): void => {
    const key = `${d.host}:${d.port}`;
    if (d.allowed && seen.has(key)) return;
    if (d.allowed) seen.add(key);
    const body = `${d.allowed ? 'egress allowed' : 'egress denied'}: ${key}\nhost: ${d.host}\nport: ${d.port}\nmethod: ${d.method}`;
    const p = post(ctx, d.allowed ? 'EGRESS_ALLOWED' : 'EGRESS_DENIED', body).catch(() => undefined);
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const opened = await openSandbox(
    {
      command,
      args,
      cwd: ctx.cwd,
      env: ctx.env,
      taskDir: ctx.taskDir ?? dirname(dirname(ctx.runDir)),
      runsRoot: ctx.opts.root,
      binDir: runAgentBinDir(),
      config: ctx.opts.config,
      agent,
    },
    onDecision,
  );
  try {
    writeEgressBytes(ctx.runDir, {}); // marks the run as sandboxed while it runs (the API's `sandbox`)
  } catch {
    // a report only
  }
  return {
    ...opened,
    close: async () => {
      await opened.close();
      await Promise.all([...pending]);
      try {
        writeEgressBytes(ctx.runDir, opened.egressBytes());
      } catch {
        // the counts are a report: a failed write does not fail the run
      }
    },
  };
}
