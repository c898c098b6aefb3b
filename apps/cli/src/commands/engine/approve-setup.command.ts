import { Command, CommandRunner, Option } from 'nest-commander';
import { isApproved, readApprovals, recordApprovals, repoRoot, resolveCommit, scriptsAtCommit } from '@app/worktree';
import { UsageError } from '../../common/cli-errors';

interface ApproveFlags {
  repo?: string;
  ref?: string;
  sha256?: string;
  list?: boolean;
  json?: boolean;
}

@Command({
  name: 'approve-setup',
  description:
    "Approve a repository's own worktree scripts (.conductor-setup.sh, .conductor-teardown.sh) by their sha256: they run in a " +
    "task's worktree only once approved, and a changed script needs approval again. Lists each script of --ref with its sha256; " +
    'without --list records the approval in the state folder ($CONDUCTOR_STATE_DIR or ~/.run-agent/setup-approvals.yaml).',
})
export class ApproveSetupCommand extends CommandRunner {
  async run(_args: string[], flags: ApproveFlags = {}): Promise<void> {
    const repo = await repoRoot(flags.repo ?? process.cwd());
    const ref = flags.ref?.trim() || 'HEAD';
    const commit = await resolveCommit(repo, ref, '--ref');
    let scripts = await scriptsAtCommit(repo, commit);
    if (flags.sha256 !== undefined) {
      scripts = scripts.filter((s) => s.sha256 === flags.sha256);
      if (!scripts.length) throw new UsageError(`no repository script with sha256 ${flags.sha256} at ${ref} in ${repo}`);
    }
    if (!flags.list) await recordApprovals(repo, scripts);
    const approvals = readApprovals();
    const rows = scripts.map((s) => ({ kind: s.kind, path: s.path, sha256: s.sha256, approved: isApproved(repo, s, approvals) }));
    if (flags.json) {
      process.stdout.write(`${JSON.stringify({ repo, ref, commit, scripts: rows }, null, 2)}\n`);
      return;
    }
    if (!rows.length) process.stdout.write(`no repository scripts at ${ref} in ${repo}\n`);
    for (const r of rows) process.stdout.write(`${r.approved ? 'approved' : 'NOT approved'}\t${r.sha256}\t${r.path}\n`);
  }

  @Option({ flags: '--repo <dir>', description: 'the repository (default: the one containing the working directory)' })
  parseRepo(v: string): string {
    return v;
  }

  @Option({ flags: '--ref <ref>', description: 'the commit whose scripts to approve (default HEAD; new worktrees start from their base commit)' })
  parseRef(v: string): string {
    return v;
  }

  @Option({ flags: '--sha256 <hash>', description: 'approve only the script with this sha256 (as printed by a refused task start); exit 2 if none matches' })
  parseSha(v: string): string {
    if (!/^[0-9a-f]{64}$/.test(v)) throw new UsageError(`--sha256 must be 64 lower-case hex digits, got ${JSON.stringify(v)}`);
    return v;
  }

  @Option({ flags: '--list', description: 'only list the scripts with their sha256 and approval; approve nothing' })
  parseList(): boolean {
    return true;
  }

  @Option({ flags: '--json', description: 'print {repo, ref, commit, scripts: [{kind, path, sha256, approved}]}' })
  parseJson(): boolean {
    return true;
  }
}
