import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { loopParts } from '../../utils/loop-parts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBusWriters, readMessages } from '@app/messagebus';
import { AppConfig, loadConfig, parseRunInfo, RunsLayout, serializeRunInfo, ZERO_TIME } from '@app/storage';
import { configIsolation, ensureTaskWorktree, gcWorktrees, mergeTask, normalizePaths, parsePatch, pathsOverlap, prepareTaskWorktree, readWorktreeRecord, removeTaskWorktree, isWorktreeError } from '@app/worktree';
import { gitSync, makeRepo } from '../../utils/git-repo';

const P = 'proj';
const writers = createBusWriters();
const T1 = 'task-20260101-000001-alpha';
const T2 = 'task-20260101-000002-beta';
const T3 = 'task-20260101-000003-gamma';

function config(worktree: AppConfig['worktree']): AppConfig {
  return { agents: {}, defaults: {} as AppConfig['defaults'], api: {} as AppConfig['api'], storage: {} as AppConfig['storage'], worktree };
}

describe('worktree lifecycle (real git)', () => {
  let dir: string;
  let repo: string;
  let root: string;
  let layout: RunsLayout;
  const taskDir = (t: string): string => layout.taskDir(P, t);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wt-life-'));
    repo = makeRepo(join(dir, 'repo'));
    root = join(dir, 'runs');
    layout = new RunsLayout(root);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs setup and teardown hooks in the worktree with JRUN_WORKTREE and JRUN_PORT; removal is repeatable', async () => {
    const log = join(dir, 'hooks.log');
    const cfg = config({ setup: `echo "setup $(pwd) $JRUN_WORKTREE $JRUN_PORT" >> ${log}`, teardown: `echo "teardown $(pwd) $JRUN_WORKTREE" >> ${log}` });
    const rec = await ensureTaskWorktree({ projectId: P, taskId: T1, taskDir: taskDir(T1), request: { repo }, config: cfg });
    // a second call finds the finished worktree: setup does not run twice
    await ensureTaskWorktree({ projectId: P, taskId: T1, taskDir: taskDir(T1), request: { repo }, config: cfg });
    expect(readFileSync(log, 'utf8')).toBe(`setup ${rec.path} ${rec.path} ${rec.port}\n`);
    await removeTaskWorktree(taskDir(T1), { config: cfg });
    await removeTaskWorktree(taskDir(T1), { config: cfg });
    expect(readFileSync(log, 'utf8')).toBe(`setup ${rec.path} ${rec.path} ${rec.port}\nteardown ${rec.path} ${rec.path}\n`);
    expect(existsSync(rec.path)).toBe(false);
    expect(gitSync(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    expect(Date.parse(readWorktreeRecord(taskDir(T1))?.removed_at ?? '')).toBeGreaterThan(Date.now() - 600_000); // stamped by this removal
    // the branch survives a removal without deleteBranch
    expect(gitSync(repo, 'branch', '--list', `conductor/${T1}`)).toContain(T1);
  });

  it('a failing setup hook fails the task start and is retried next time', async () => {
    const cfg = config({ setup: 'echo "no deps" >&2; exit 7' });
    const err = await ensureTaskWorktree({ projectId: P, taskId: T1, taskDir: taskDir(T1), request: { repo }, config: cfg }).catch((e: unknown) => e);
    expect(isWorktreeError(err, 'WORKTREE')).toBe(true);
    expect((err as Error).message).toBe('setup hook "echo \\"no deps\\" >&2; exit 7" failed with exit code 7: no deps');
    expect(readWorktreeRecord(taskDir(T1))?.setup_done).toBe(false);
    const ok = await ensureTaskWorktree({ projectId: P, taskId: T1, taskDir: taskDir(T1), request: { repo }, config: config({ setup: 'true' }) });
    expect(ok.setup_done).toBe(true);
  });

  it('warns both tasks on their buses when declared paths overlap', async () => {
    await prepareTaskWorktree({ root, writers, projectId: P, taskId: T1, taskDir: taskDir(T1), isolation: { worktree: true, repo, paths: ['src'] } });
    await prepareTaskWorktree({ root, writers, projectId: P, taskId: T2, taskDir: taskDir(T2), isolation: { worktree: true, repo, paths: ['docs'] } });
    mkdirSync(taskDir(T3), { recursive: true });
    writeFileSync(join(taskDir(T3), 'TASK-CONFIG.yaml'), 'paths:\n  - src/app.ts\n');
    await prepareTaskWorktree({ root, writers, projectId: P, taskId: T3, taskDir: taskDir(T3), isolation: { worktree: true, repo } });
    const warnings = (t: string) => readMessages(join(taskDir(t), 'TASK-MESSAGE-BUS.md')).filter((m) => m.type === 'WARNING').map((m) => m.body);
    expect(warnings(T3)).toEqual([`worktree paths overlap with task ${T1}: src/app.ts ↔ src; expect merge conflicts (merge one, then rebase the other)`]);
    expect(warnings(T1)).toEqual([`worktree paths overlap with task ${T3}: src/app.ts ↔ src; expect merge conflicts (merge one, then rebase the other)`]);
    expect(existsSync(join(taskDir(T2), 'TASK-MESSAGE-BUS.md'))).toBe(false);
  });

  it('gc removes merged and deleted-task worktrees past the cutoff, never an unmerged branch without force', async () => {
    const old = new Date(Date.now() - 10 * 86_400_000);
    for (const t of [T1, T2, T3]) {
      const wt = await prepareTaskWorktree({ root, writers, projectId: P, taskId: t, taskDir: taskDir(t), isolation: { worktree: true, repo } });
      writeFileSync(join(wt!.cwd, `${t}.txt`), `${t}\n`);
    }
    await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T1) });
    // T3's task folder is deleted after its branch was merged by hand
    await mergeTask({ writers: loopParts.writers, taskDir: taskDir(T3) });
    rmSync(taskDir(T3), { recursive: true });
    for (const t of [T1, T2]) utimesSync(taskDir(t), old, old);
    const wt3 = join(repo, '.conductor', 'worktrees', T3);
    utimesSync(wt3, old, old);

    const recent = await gcWorktrees({ layout: new RunsLayout(root), cutoff: new Date(Date.now() - 20 * 86_400_000) });
    expect(recent.removed).toEqual([]);

    const dry = await gcWorktrees({ layout: new RunsLayout(root), cutoff: new Date(), dryRun: true });
    expect(dry.removed.map((r) => [r.task_id, r.reason])).toEqual([[T1, 'merged'], [T3, 'task deleted']]);
    expect(existsSync(wt3)).toBe(true);

    const report = await gcWorktrees({ layout: new RunsLayout(root), cutoff: new Date() });
    expect(report.removed.map((r) => [r.task_id, r.reason])).toEqual([[T1, 'merged'], [T3, 'task deleted']]);
    expect(report.kept_unmerged).toEqual([join(repo, '.conductor', 'worktrees', T2)]);
    expect(existsSync(join(repo, '.conductor', 'worktrees', T1))).toBe(false);
    expect(existsSync(wt3)).toBe(false);
    expect(gitSync(repo, 'branch', '--format=%(refname:short)', '--list', 'conductor/*')).toBe(`conductor/${T2}`);

    const forced = await gcWorktrees({ layout: new RunsLayout(root), cutoff: new Date(), force: true });
    expect(forced.removed.map((r) => [r.task_id, r.reason])).toEqual([[T2, 'forced']]);
    // forced removal keeps the unmerged branch (no commit is lost)
    expect(gitSync(repo, 'branch', '--format=%(refname:short)', '--list', 'conductor/*')).toBe(`conductor/${T2}`);
    expect(gitSync(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
  });
});

describe('worktree helpers', () => {
  it('parses a patch into files and hunks', () => {
    const patch = [
      'diff --git a/a.txt b/a.txt',
      'index 1..2 100644',
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1,2 +1,2 @@',
      ' keep',
      '-old',
      '+new',
      'diff --git a/new.bin b/new.bin',
      'new file mode 100644',
      'Binary files /dev/null and b/new.bin differ',
      'diff --git a/x.txt b/y.txt',
      'similarity index 90%',
      'rename from x.txt',
      'rename to y.txt',
      '@@ -1 +1,2 @@',
      ' a',
      '+b',
      '',
    ].join('\n');
    expect(parsePatch(patch)).toEqual([
      { path: 'a.txt', status: 'modified', additions: 1, deletions: 1, binary: false, hunks: [{ header: '@@ -1,2 +1,2 @@', lines: [' keep', '-old', '+new'] }] },
      { path: 'new.bin', status: 'added', additions: 0, deletions: 0, binary: true, hunks: [] },
      { path: 'y.txt', old_path: 'x.txt', status: 'renamed', additions: 1, deletions: 0, binary: false, hunks: [{ header: '@@ -1 +1,2 @@', lines: [' a', '+b'] }] },
    ]);
  });

  it('validates declared paths and detects overlaps', () => {
    expect(normalizePaths(['./src/', 'docs,README.md', 'src'])).toEqual(['src', 'docs', 'README.md']);
    expect(() => normalizePaths(['../etc'])).toThrow('must be relative to the repository');
    expect(() => normalizePaths(['/abs'])).toThrow('must be relative to the repository');
    expect(pathsOverlap(['src'], ['src/a.ts', 'lib'])).toEqual(['src ↔ src/a.ts']);
    expect(pathsOverlap(['lib', 'docs'], ['docs'])).toEqual(['docs']);
    expect(pathsOverlap(['src/a'], ['src/ab'])).toEqual([]);
  });

  it('reads isolation from config (per-agent override wins) and keeps run-info worktree fields', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wt-cfg-'));
    try {
      const path = join(dir, 'config.yaml');
      writeFileSync(path, 'defaults:\n  isolation: worktree\nagents:\n  a:\n    type: claude\n  b:\n    type: codex\n    isolation: none\nworktree:\n  verify: npm test\n');
      const cfg = loadConfig(path, { strict: false });
      expect(cfg.worktree).toEqual({ verify: 'npm test' });
      expect(configIsolation(cfg, 'a')).toBe(true);
      expect(configIsolation(cfg, 'b')).toBe(false);
      writeFileSync(path, 'defaults:\n  isolation: sandbox\n');
      expect(() => loadConfig(path, { strict: false })).toThrow('defaults.isolation: must be "worktree" or "none", got "sandbox"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const text = serializeRunInfo({
      version: 1, run_id: 'r', project_id: 'p', task_id: 't', agent: 'claude', pid: 1, pgid: 1, start_time: ZERO_TIME, end_time: ZERO_TIME,
      exit_code: 0, status: 'completed', cwd: '/w', worktree: '/w', branch: 'conductor/t', base_commit: 'abc', agent_version: '',
    });
    expect(text).toContain('cwd: /w\nworktree: /w\nbranch: conductor/t\nbase_commit: abc\n');
    expect(parseRunInfo(text)).toMatchObject({ worktree: '/w', branch: 'conductor/t', base_commit: 'abc' });
  });
});
