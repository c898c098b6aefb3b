// A new user's first commands (README "Executables"), on a machine with an empty home directory
// (issue #13 items 3 and 7).
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { cleanEnv, requireBuild, runAgentBin, runCli } from './bus-helpers';

describe('first run with an empty HOME', () => {
  let tmp: string;
  let home: string;
  let cwd: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    requireBuild();
    tmp = mkdtempSync(join(tmpdir(), 'first-run-'));
    home = join(tmp, 'home');
    cwd = join(tmp, 'work');
    mkdirSync(home);
    mkdirSync(cwd);
    env = cleanEnv(home);
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('runs the README Executables block as shown', () => {
    expect(runCli(['list'], { env, cwd })).toEqual({
      code: 0,
      stdout: '',
      stderr: `no runs yet in ${join(home, '.run-agent', 'runs')} (start one with \`run-agent task\`)\n`,
    });
    const version = runCli(['--version'], { env, cwd });
    expect(version).toEqual({ code: 0, stdout: expect.stringMatching(/^run-agent \d+\.\d+\.\d+\n$/), stderr: '' });
    const post = runCli(['bus', 'post', '--project', 'demo', '--body', 'hello'], { env, cwd });
    expect(post).toEqual({ code: 0, stdout: expect.stringMatching(/^msg_id: \S+\n$/), stderr: '' });
    const read = runCli(['bus', 'read', '--project', 'demo'], { env, cwd });
    expect(read.code).toBe(0);
    expect(read.stdout).toMatch(/\(INFO\) hello/);
    expect(runCli(['list'], { env, cwd })).toEqual({ code: 0, stdout: 'demo\n', stderr: '' });
    expect(readdirSync(join(home, '.run-agent', 'runs'))).toEqual(['demo']);
  });

  it('--version: one line, --json, and listed in --help', () => {
    const json = runCli(['--version', '--json'], { env, cwd });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ name: 'run-agent', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(runCli(['-v'], { env, cwd }).stdout).not.toMatch(/By |linkedin/);
    expect(runCli(['--help'], { env, cwd }).stdout).toMatch(/-v, --version +print the version/);
  });

  it('a too-short task slug names the 3-50 character rule and creates nothing', () => {
    const root = join(tmp, 'runs');
    const res = runCli(['task', '--root', root, '--project', 'demo', '--task', 'task-20260101-000000-ab', '--prompt', 'x'], { env, cwd });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^Error: invalid task ID "task-20260101-000000-ab": .*slug 3-50 characters/);
    expect(res.stderr.split('\n')).toHaveLength(2);
    expect(readdirSync(tmp).sort()).toEqual(['home', 'work']);
  });

  it.each([
    ['an unknown agent', ['--agent', 'nosuch', '--prompt', 'x'], 2, /^Error: unknown agent type "nosuch": without a config the agent must be a type: claude, codex, gemini, perplexity, xai\n$/],
    ['no prompt', ['--agent', 'codex'], 2, /^Error: TASK.md not found and no prompt provided\n$/],
    ['a missing agent binary', ['--agent', 'codex', '--prompt', 'x'], 1, /^Error: agent cli "codex" not found in PATH\n$/],
  ])('a task start refused for %s leaves no task folder behind', (_name, args, code, stderr) => {
    const root = join(tmp, 'refused');
    // node itself, not the shebang's `env node`: PATH holds no agent CLIs (and maybe another node)
    const r = spawnSync(process.execPath, [runAgentBin, 'task', '--root', root, '--project', 'demo', ...args], { env: { ...env, PATH: '/usr/bin:/bin' }, cwd, encoding: 'utf8' });
    const res = { code: r.status, stderr: r.stderr };
    expect(res.code).toBe(code);
    expect(res.stderr).toMatch(stderr);
    expect(readdirSync(tmp)).not.toContain('refused');
  });
});
