import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@app/storage';
import { createApiApp, waitUntil } from '../../utils/api-app';
import { gitSync } from '../../utils/git-repo';
import { P, T1, T2, WorktreeSandbox } from './helpers';

const SCRIPT = '.conductor-setup.sh';

describe('repository setup scripts run only once approved by sha256 (real git, built CLI, API)', () => {
  let sb: WorktreeSandbox;
  let ran: string;
  let text: string;
  let hash: string;
  const state = (): Record<string, string> => ({ CONDUCTOR_STATE_DIR: join(sb.dir, 'state') });

  beforeEach(() => {
    sb = new WorktreeSandbox();
    ran = join(sb.dir, 'setup-ran.txt');
    text = `echo "setup in $(pwd)" >> ${ran}\n`;
    hash = createHash('sha256').update(text).digest('hex');
    writeFileSync(join(sb.repo, SCRIPT), text);
    gitSync(sb.repo, 'add', '-A');
    gitSync(sb.repo, 'commit', '-q', '-m', 'setup script');
  });
  afterEach(() => sb.cleanup());

  it('CLI: refused with exit 2 naming the script, sha256 and command; approve-setup lists and approves; then it runs', async () => {
    const head = gitSync(sb.repo, 'rev-parse', 'HEAD');
    const refused = await sb.task(T1, 'ALPHA', []);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`repository setup script ${SCRIPT} (sha256 ${hash}) in ${sb.repo} is not approved`);
    expect(refused.stderr).toContain(`run-agent approve-setup --repo ${sb.repo} --ref ${head} --sha256 ${hash}`);
    expect(existsSync(ran)).toBe(false);
    expect(existsSync(join(sb.repo, '.conductor', 'worktrees', T1))).toBe(false);

    const list = await sb.run(['approve-setup', '--repo', sb.repo, '--list', '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ repo: sb.repo, commit: head, scripts: [{ kind: 'setup', path: SCRIPT, sha256: hash, approved: false }] });
    const wrong = await sb.run(['approve-setup', '--repo', sb.repo, '--sha256', '0'.repeat(64)]);
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringContaining(`no repository script with sha256 ${'0'.repeat(64)}`)]);

    const approve = await sb.run(['approve-setup', '--repo', sb.repo, '--ref', head, '--sha256', hash]);
    expect([approve.code, approve.stdout]).toEqual([0, `approved\t${hash}\t${SCRIPT}\n`]);
    const ok = await sb.task(T1, 'ALPHA');
    expect([ok.code, ok.stderr]).toEqual([0, expect.stringContaining('DONE: task completed')]);
    expect(readFileSync(ran, 'utf8')).toBe(`setup in ${join(sb.repo, '.conductor', 'worktrees', T1)}\n`);
  });

  it('API: 400 with the same line before anything is written; once approved the task starts and shows the sha256', async () => {
    process.env.CONDUCTOR_STATE_DIR = state().CONDUCTOR_STATE_DIR;
    const api = await createApiApp({ root: sb.root, config: loadConfig(sb.config, { strict: false }) });
    try {
      const create = (task: string) =>
        api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { project_id: P, task_id: task, agent_type: 'writer', prompt: 'write', project_root: sb.repo, isolation: 'worktree', config: { WRITE_TEXT: 'x' } } });
      const refused = await create(T2);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error.message).toContain(`${SCRIPT} (sha256 ${hash})`);
      expect(existsSync(sb.taskDir(T2))).toBe(false);

      const approve = await sb.run(['approve-setup', '--repo', sb.repo], { env: state() });
      expect(approve.code).toBe(0);
      expect((await create(T2)).statusCode).toBe(201);
      const detail = await waitUntil(async () => {
        const d = (await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${T2}?project_id=${P}` })).json();
        return d.status === 'all_finished' ? d : undefined;
      });
      expect(detail.worktree.setup_script).toEqual({ path: SCRIPT, sha256: hash });
      expect(existsSync(ran)).toBe(true);
    } finally {
      await api.close();
      delete process.env.CONDUCTOR_STATE_DIR;
    }
  });
});
