import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '@app/storage';
import { createApiApp, TestApi, waitUntil } from '../../utils/api-app';
import { gitSync } from '../../utils/git-repo';
import { P, T1, T2, WorktreeSandbox } from './helpers';

describe('worktree tasks through the API (real git, in-process server)', () => {
  let sb: WorktreeSandbox;
  let api: TestApi;
  const inject = (method: string, url: string, payload?: unknown) => api.app.inject({ method: method as 'GET', url, payload: payload as object });
  const create = (task: string, extra: object) =>
    inject('POST', '/api/v1/tasks', { project_id: P, task_id: task, agent_type: 'writer', prompt: 'write', project_root: sb.repo, ...extra });

  beforeAll(async () => {
    sb = new WorktreeSandbox('worktree:\n  verify: "test -s shared.txt"\n');
    api = await createApiApp({ root: sb.root, config: loadConfig(sb.config, { strict: false }) });
  });
  afterAll(async () => {
    await api.close();
    sb.cleanup();
  });

  it('runs isolation:worktree tasks, serves their diff, merges one and reports the other conflict as 409', async () => {
    for (const [task, text] of [[T1, 'ALPHA'], [T2, 'BETA']]) {
      expect((await create(task, { isolation: 'worktree', paths: ['shared.txt'], config: { WRITE_TEXT: text } })).statusCode).toBe(201);
    }
    for (const task of [T1, T2]) {
      await waitUntil(async () => ((await inject('GET', `/api/projects/${P}/tasks/${task}`)).json().status === 'all_finished' ? true : undefined));
    }
    // overlapping declared paths were announced on the bus
    expect(sb.bus(T2).some((m) => m.type === 'WARNING' && m.body.includes(`overlap with task ${T1}`))).toBe(true);
    const base = gitSync(sb.repo, 'rev-parse', 'main');
    const detail = (await inject('GET', `/api/v1/tasks/${T1}?project_id=${P}`)).json();
    expect(detail.worktree).toMatchObject({ path: path.join(sb.repo, '.conductor', 'worktrees', T1), branch: `conductor/${T1}`, base_commit: base, base_branch: 'main' });
    expect(detail.worktree.merge_status).toBeUndefined();

    const diff = await inject('GET', `/api/projects/${P}/tasks/${T2}/diff`);
    expect(diff.statusCode).toBe(200);
    expect(diff.json().files.map((f: { path: string }) => f.path)).toEqual(['shared.txt']);
    expect(diff.json().patch).toContain('+BETA');
    expect((await inject('GET', `/api/v1/tasks/${T1}/diff?project_id=${P}`)).json().patch).toContain('+ALPHA');

    const merged = await inject('POST', `/api/v1/tasks/${T1}/merge?project_id=${P}`);
    expect(merged.statusCode).toBe(200);
    expect(merged.json()).toMatchObject({ branch: `conductor/${T1}`, base_branch: 'main', already_merged: false, worktree: { merge_status: 'merged' } });
    expect(fs.readFileSync(path.join(sb.repo, 'shared.txt'), 'utf8')).toContain('ALPHA');

    const before = gitSync(sb.repo, 'rev-parse', 'main');
    const conflict = await inject('POST', `/api/projects/${P}/tasks/${T2}/merge`);
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error.message).toContain('shared.txt');
    expect(gitSync(sb.repo, 'rev-parse', 'main')).toBe(before);
    const shown = (await inject('GET', `/api/projects/${P}/tasks/${T2}`)).json();
    expect(shown.worktree).toMatchObject({ merge_status: 'conflict', merge_files: ['shared.txt'] });
  });

  it('refuses bad isolation requests with 400 and writes nothing', async () => {
    const t = 'task-20260101-120000-refused';
    const cases: [object, string][] = [
      [{ isolation: 'sandbox' }, 'invalid isolation "sandbox": must be worktree or none'],
      [{ isolation: 'worktree', base: '--upload-pack=x' }, 'base "--upload-pack=x" is not a valid git ref'],
      // resolved to a commit before the 201 (issue #29)
      [{ isolation: 'worktree', base: 'main^{tree}' }, 'base "main^{tree}" is not a commit in'],
      [{ isolation: 'worktree', base: 'no-such-branch' }, 'base "no-such-branch" is not a commit in'],
      [{ isolation: 'worktree', paths: ['../etc'] }, 'invalid path "../etc"'],
      [{ base: 'main' }, 'base and paths require isolation "worktree"'],
      [{ isolation: 'worktree', project_root: sb.root }, 'isolation "worktree" needs project_root inside a git repository'],
    ];
    for (const [extra, message] of cases) {
      const res = await create(t, extra);
      expect([res.statusCode, res.json().error.message]).toEqual([400, expect.stringContaining(message)]);
    }
    expect(fs.existsSync(sb.taskDir(t))).toBe(false);
    fs.mkdirSync(sb.taskDir(t), { recursive: true });
    const plain = await inject('GET', `/api/projects/${P}/tasks/${t}/diff`);
    expect([plain.statusCode, plain.json().error.message]).toEqual([404, 'task has no worktree']);
  });

  it('never hands a WORKTREE.yaml field to git as an option (issue #29)', async () => {
    const t = 'task-20260101-120000-injected';
    const rec = (await inject('GET', `/api/projects/${P}/tasks/${T1}`)).json().worktree;
    const planted = path.join(sb.root, 'planted.txt');
    fs.mkdirSync(sb.taskDir(t), { recursive: true });
    const yaml = (fields: Record<string, string>) =>
      Object.entries({ project_id: P, task_id: t, repo: sb.repo, path: path.join(sb.repo, 'gone'), branch: `conductor/${t}`, base_commit: rec.base_commit, base_branch: 'main', ...fields })
        .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
        .join('\n');
    const injected: Record<string, string>[] = [{ base_commit: `--output=${planted}` }, { branch: `--output=${planted}` }, { merged_commit: `--output=${planted}` }];
    for (const fields of injected) {
      fs.writeFileSync(path.join(sb.taskDir(t), 'WORKTREE.yaml'), `${yaml(fields)}\n`);
      const res = await inject('GET', `/api/projects/${P}/tasks/${t}/diff`);
      expect([Object.keys(fields)[0], res.statusCode]).toEqual([Object.keys(fields)[0], 500]);
      expect(res.json().error.message).toMatch(/^WORKTREE\.yaml: \w+ "--output=[^\n]*is not a valid git ref$/);
      expect(fs.existsSync(planted)).toBe(false);
    }
  });
});

