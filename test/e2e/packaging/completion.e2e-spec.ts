// `run-agent completion bash|zsh|fish` and `conductor completion …` print scripts generated from
// the registered command tree of the built CLI; the bash one is exercised in a real bash.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, cleanEnv, REPO } from './packaging-helpers';

describe('completion command', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const cli = (program: string, ...args: string[]) => spawnSync(process.execPath, [join(REPO, 'bin', program), ...args], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });

  beforeAll(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'completion-e2e-'));
    env = cleanEnv(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function completeBash(program: string, fn: string, words: string[]): string[] {
    const res = cli(program, 'completion', 'bash');
    expect(res.status).toBe(0);
    const file = join(dir, `${program}.bash`);
    writeFileSync(file, res.stdout);
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const script = `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return execFileSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8' }).split('\n').filter(Boolean);
  }

  it('bash: `run-agent bu` completes to `bus`, and deeper words and flags complete too', () => {
    expect(completeBash('run-agent', '_run_agent_complete', ['run-agent', 'bu'])).toEqual(['bus']);
    expect(completeBash('run-agent', '_run_agent_complete', ['run-agent', 'bus', 'po'])).toEqual(['post']);
    expect(completeBash('run-agent', '_run_agent_complete', ['run-agent', 'bus', 'post', '--proj'])).toEqual(['--project']);
    expect(completeBash('run-agent', '_run_agent_complete', ['run-agent', 'comp'])).toEqual(['completion']);
  });

  it('bash: conductor completes its API-client subcommands from `server …`', () => {
    expect(completeBash('conductor', '_conductor_complete', ['conductor', 'sta'])).toEqual(['status']);
    expect(completeBash('conductor', '_conductor_complete', ['conductor', 'status', '--ser'])).toEqual(['--server']);
  });

  it('zsh and fish scripts are printed for both programs', () => {
    const zsh = cli('run-agent', 'completion', 'zsh');
    expect(zsh.status).toBe(0);
    expect(zsh.stdout.startsWith('#compdef run-agent\n')).toBe(true);
    expect(zsh.stdout).toContain("'bus:");
    const fish = cli('conductor', 'completion', 'fish');
    expect(fish.status).toBe(0);
    expect(fish.stdout).toContain("complete -c conductor -n '__conductor_at \\'\\'' -f -a 'serve'");
  });

  it('rejects an unknown shell with a one-line usage error (exit 2)', () => {
    const res = cli('run-agent', 'completion', 'powershell');
    expect(res.status).toBe(2);
    expect(res.stderr).toBe('Error: unsupported shell "powershell" (expected bash, zsh, fish)\n');
    expect(res.stdout).toBe('');
  });
});
