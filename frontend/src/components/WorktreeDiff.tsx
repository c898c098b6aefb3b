import { useEffect, useState } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import { api, describeError } from '../api/client';
import { fetchPullRequest, fetchTaskDiff, fetchWorktree, mergeState, mergeTask, openPullRequest, pullState, type DiffFile, type WorktreeInfo } from '../api/worktree';
import { usePoll } from '../hooks/usePoll';

const STATUS_LETTER: Record<DiffFile['status'], string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

/** Branch and merge state of a worktree task, for the run header (nothing for other tasks). */
export function WorktreeBadge({ project, taskId }: { project: string; taskId: string }) {
  const wt = usePoll(`${project}/${taskId}`, () => fetchWorktree(project, taskId), 5000);
  if (!wt.data) return null;
  const state = mergeState(wt.data);
  return (
    <span className={`worktree-badge tone-${state.tone}`} title={wt.data.merge_detail ?? wt.data.path} data-testid="worktree-badge">
      {wt.data.branch} · {state.label}
    </span>
  );
}

interface WorktreeDiffProps {
  project: string;
  taskId: string;
  notify: (text: string, error?: boolean) => void;
  onChanged: () => void;
}

/** The task's changes against its base: file list, per-file hunks, merge state and a Merge button. */
export function WorktreeDiff({ project, taskId, notify, onChanged }: WorktreeDiffProps) {
  const diff = usePoll(`${project}/${taskId}/diff`, () => fetchTaskDiff(project, taskId), 5000);
  const [selected, setSelected] = useState<string | undefined>();
  const [merging, setMerging] = useState(false);
  if (diff.error) return <p className="empty">{describeError(diff.error)}</p>;
  if (diff.data === undefined) return <p className="empty">Loading…</p>;
  if (diff.data === null) return <p className="empty">This task does not run in a git worktree (start it with --worktree).</p>;
  const d = diff.data;
  const file = d.files.find((f) => f.path === selected) ?? d.files[0];

  const merge = async () => {
    setMerging(true);
    try {
      const r = await mergeTask(project, taskId);
      notify(r.already_merged ? `${d.branch} was already merged` : `Merged ${d.branch}`);
      onChanged();
    } catch (err) {
      notify(`Merge failed: ${describeError(err)}`, true);
    } finally {
      setMerging(false);
      diff.reload();
    }
  };

  return (
    <div className="worktree-diff">
      <div className="worktree-head">
        <span className="muted">
          {d.branch} against {d.base_commit.slice(0, 10)}
          {d.worktree?.base_branch ? ` (${d.worktree.base_branch})` : ''} · {d.files.length} file(s)
        </span>
        {d.worktree?.setup_script && (
          <span className="muted" title={`sha256 ${d.worktree.setup_script.sha256}`} data-testid="setup-script">
            setup {d.worktree.setup_script.path} (approved, sha256 {d.worktree.setup_script.sha256.slice(0, 12)})
          </span>
        )}
        {d.worktree && <MergeStatus w={d.worktree} />}
        <Button primary disabled={merging || d.worktree?.merge_status === 'merged'} onClick={merge} data-testid="merge-button">
          {merging ? 'Merging…' : 'Merge'}
        </Button>
        <PullRequestControls project={project} taskId={taskId} notify={notify} />
      </div>
      {d.files.length === 0 ? (
        <p className="empty">No changes against the base commit.</p>
      ) : (
        <div className="worktree-body">
          <ul className="diff-files" aria-label="Changed files">
            {d.files.map((f) => (
              <li key={f.path}>
                <button className={f === file ? 'diff-file active' : 'diff-file'} onClick={() => setSelected(f.path)}>
                  <span className={`diff-status s-${f.status}`}>{STATUS_LETTER[f.status]}</span>
                  <span className="diff-path">{f.path}</span>
                  <span className="diff-counts">
                    +{f.additions} −{f.deletions}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {file && <FileHunks file={file} />}
        </div>
      )}
    </div>
  );
}

/** The task's GitHub pull request (docs/triggers.md): its state and link, and a button that opens or updates it — shown when the server can open pull requests. */
function PullRequestControls({ project, taskId, notify }: Pick<WorktreeDiffProps, 'project' | 'taskId' | 'notify'>) {
  const [enabled, setEnabled] = useState(false);
  const [busy, setBusy] = useState(false);
  const pr = usePoll(`${project}/${taskId}/pull-request`, () => fetchPullRequest(project, taskId), 5000);
  useEffect(() => {
    let live = true;
    api.serverStatus().then(
      (s) => live && setEnabled(s.pull_requests === true),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  if (!enabled && !pr.data) return null;
  const open = async () => {
    setBusy(true);
    try {
      const r = await openPullRequest(project, taskId);
      notify(r.number ? `Pull request #${r.number} ${r.outcome}` : `Pull request: ${r.outcome.replace(/_/g, ' ')}`);
    } catch (err) {
      notify(`Pull request failed: ${describeError(err)}`, true);
    } finally {
      setBusy(false);
      pr.reload();
    }
  };
  const state = pr.data ? pullState(pr.data) : undefined;
  return (
    <>
      {state && (
        <a className={`worktree-badge tone-${state.tone}`} href={pr.data?.pull?.url} target="_blank" rel="noreferrer" data-testid="pull-request-status">
          {pr.data?.repository} {state.label}
        </a>
      )}
      {enabled && (
        <Button disabled={busy} onClick={open} data-testid="pull-request-button">
          {busy ? 'Pushing…' : pr.data?.pull?.number ? 'Update pull request' : 'Open pull request'}
        </Button>
      )}
    </>
  );
}

function MergeStatus({ w }: { w: WorktreeInfo }) {
  const state = mergeState(w);
  return (
    <span className={`worktree-badge tone-${state.tone}`} role={state.tone === 'error' ? 'alert' : undefined} data-testid="merge-status">
      {state.label}
      {w.merge_files?.length ? `: ${w.merge_files.join(', ')}` : ''}
    </span>
  );
}

function FileHunks({ file }: { file: DiffFile }) {
  return (
    <div className="diff-hunks" aria-label={`Changes in ${file.path}`}>
      <div className="diff-file-title">
        {file.old_path ? `${file.old_path} → ` : ''}
        {file.path}
      </div>
      {file.binary && <p className="empty">Binary file</p>}
      {file.hunks.map((h, i) => (
        <pre key={i} className="diff-hunk">
          <span className="hunk-header">{h.header}</span>
          {h.lines.map((line, j) => (
            <span key={j} className={line.startsWith('+') ? 'line-add' : line.startsWith('-') ? 'line-del' : 'line-ctx'}>
              {line}
            </span>
          ))}
        </pre>
      ))}
    </div>
  );
}
