/**
 * A server whose host has no `git` (as the Docker image had): a worktree task is refused with a
 * message that says git is missing, not that the repository is not one. Needs `npm run build`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRepo } from '../../utils/git-repo';
import { postJson, RunningServer, startConductor, writeConfig, writeFakeAgent } from '../server/helpers';

describe('worktree tasks on a server without git (e2e)', () => {
  let dir: string;
  let server: RunningServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'worktree-no-git-'));
    makeRepo(join(dir, 'repo'));
    const emptyPath = join(dir, 'empty-bin');
    mkdirSync(emptyPath);
    server = await startConductor(dir, join(dir, 'runs'), writeConfig(dir, writeFakeAgent(dir)), { PATH: emptyPath });
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 422 naming the missing git, and writes nothing', async () => {
    const task = 'task-20260101-120000-nogit';
    const res = await postJson(`${server.url}/api/v1/tasks`, { project_id: 'p', task_id: task, agent_type: 'fake', prompt: 'x', isolation: 'worktree', project_root: join(dir, 'repo') });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toBe('isolation "worktree" needs git on the server: git is not installed (not found on PATH)');
    expect(existsSync(join(dir, 'runs', 'p', task))).toBe(false);
  });
});
