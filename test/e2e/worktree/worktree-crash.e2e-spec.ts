import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWorktreeRecord } from '@app/worktree';
import { gitSync } from '../../utils/git-repo';
import { RUN_AGENT } from '../cli/inspect-helpers';
import { waitFor } from '../../utils/wait';
import { P, T1, WorktreeSandbox } from './helpers';

/** Starts `run-agent task --worktree` in its own process group, waits for `marker`, then SIGKILLs the whole group. */
async function killWhen(sb: WorktreeSandbox, marker: string): Promise<void> {
  const args = ['task', '--root', sb.root, '--config', sb.config, '--project', P, '--task', T1, '--agent', 'writer', '--prompt', 'write', '--max-restarts', '0', '--worktree', '--repo', sb.repo];
  const child = spawn(process.execPath, [RUN_AGENT, ...args], { cwd: sb.dir, env: sb.env({ WRITE_TEXT: 'ALPHA' }), stdio: 'ignore', detached: true });
  const exited = new Promise((r) => child.on('exit', r));
  try {
    await waitFor(marker, () => existsSync(marker));
  } finally {
    process.kill(-child.pid!, 'SIGKILL');
  }
  await exited;
}

describe('worktree creation is crash-safe (SIGKILL, real git)', () => {
  let sb: WorktreeSandbox;
  afterEach(() => sb.cleanup());

  it('a runner killed inside `git worktree add` (during checkout) leaves nothing that blocks a retry', async () => {
    sb = new WorktreeSandbox();
    // a smudge filter that blocks while BLOCK exists: the kill lands in the middle of the checkout
    const block = join(sb.dir, 'BLOCK');
    const mark = join(sb.dir, 'IN-CHECKOUT');
    const filter = join(sb.dir, 'slow-smudge.sh');
    writeFileSync(filter, `#!/bin/sh\nif [ -f ${block} ]; then touch ${mark}; sleep 60; fi\ncat\n`);
    chmodSync(filter, 0o755);
    gitSync(sb.repo, 'config', 'filter.slow.smudge', filter);
    writeFileSync(join(sb.repo, '.gitattributes'), '*.slow filter=slow\n');
    writeFileSync(join(sb.repo, 'data.slow'), 'payload\n');
    gitSync(sb.repo, 'add', '-A');
    gitSync(sb.repo, 'commit', '-q', '-m', 'slow file');
    writeFileSync(block, '');

    await killWhen(sb, mark);
    const wt = join(sb.repo, '.conductor', 'worktrees', T1);
    // the half-made worktree is registered (locked "initializing") and no record says it is usable
    const half = gitSync(sb.repo, 'worktree', 'list', '--porcelain');
    expect(half).toContain(`worktree ${wt}`);
    expect(half).toContain('locked initializing');
    expect(readWorktreeRecord(sb.taskDir(T1))).toBeUndefined();

    rmSync(block);
    const retry = await sb.task(T1, 'ALPHA');
    expect([retry.code, retry.stderr]).toEqual([0, expect.stringContaining('DONE: task completed')]);
    expect(retry.stderr).not.toMatch(/Error:|WARNING/);
    expect(sb.read(join(wt, 'data.slow'))).toBe('payload\n');
    expect(sb.read(join(wt, 'shared.txt'))).toContain('ALPHA');
    expect(readWorktreeRecord(sb.taskDir(T1))).toMatchObject({ path: wt, branch: `conductor/${T1}`, setup_done: true });
    const list = gitSync(sb.repo, 'worktree', 'list', '--porcelain');
    expect(list).not.toContain('locked');
    expect(list.split('\n').filter((l) => l.startsWith('worktree '))).toHaveLength(2);
  });

  it('a runner killed during the setup hook re-runs setup on retry and then starts the agent', async () => {
    const mark = '"$JRUN_WORKTREE/../setup-started"';
    sb = new WorktreeSandbox();
    const hold = join(sb.dir, 'HOLD');
    writeFileSync(hold, '');
    sb.writeConfig(`worktree:\n  setup: 'touch ${mark}; if [ -f ${hold} ]; then sleep 60; fi; echo "$JRUN_WORKTREE $JRUN_PORT" > setup-done.txt'\n`);
    const wt = join(sb.repo, '.conductor', 'worktrees', T1);
    await killWhen(sb, join(sb.repo, '.conductor', 'worktrees', 'setup-started'));
    expect(readWorktreeRecord(sb.taskDir(T1))?.setup_done).toBe(false);
    expect(existsSync(join(wt, 'setup-done.txt'))).toBe(false);
    expect(readdirSync(sb.taskDir(T1))).not.toContain('runs');

    rmSync(hold);
    const retry = await sb.task(T1, 'ALPHA');
    expect([retry.code, retry.stderr]).toEqual([0, expect.stringContaining('DONE: task completed')]);
    expect(retry.stderr).not.toMatch(/Error:|WARNING/);
    const rec = readWorktreeRecord(sb.taskDir(T1))!;
    expect(rec.setup_done).toBe(true);
    expect(sb.read(join(wt, 'setup-done.txt'))).toBe(`${wt} ${rec.port}\n`);
    expect(sb.read(join(wt, 'shared.txt'))).toContain('ALPHA');
  });
});
