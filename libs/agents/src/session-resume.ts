/**
 * The CLI arguments that continue an agent's own conversation (`resume_mode: continue`):
 * claude `--resume <id>`, codex `exec … resume <id> -`, gemini `--resume <id>`. Other agents
 * (REST, command) cannot resume: their arguments are returned unchanged.
 */
export function withResumeArgs(agentType: string, args: readonly string[], sessionId: string | undefined): string[] {
  if (!sessionId) return [...args];
  if (agentType === 'claude' || agentType === 'gemini') return [...args, '--resume', sessionId];
  if (agentType === 'codex') {
    // `codex exec [flags] resume <id> -`: the subcommand goes before the stdin marker
    const dash = args.lastIndexOf('-');
    const head = dash >= 0 ? args.slice(0, dash) : [...args];
    return [...head, 'resume', sessionId, '-'];
  }
  return [...args];
}

/** A session id is passed to a CLI as an argument: only plain ids are accepted. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
