/**
 * Fail closed on configuration (issue #29 finding 2): a config that cannot be parsed or validated
 * stops the server and every CLI command that reads it with exit 2 and one line naming the file,
 * line, column and key. Nothing starts with defaults (here: with auth off) in place of a broken file.
 * Runs the built bin/conductor and bin/run-agent.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONDUCTOR, runCli } from '../../utils/cli';

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('fail-closed config (e2e)', () => {
  let dir: string;
  let root: string;
  let env: NodeJS.ProcessEnv;
  let syntax: string;
  let typed: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'config-closed-'));
    root = join(dir, 'runs');
    mkdirSync(join(dir, 'home'));
    env = { PATH: process.env.PATH, HOME: join(dir, 'home') };
    // api.api_key is fine; the agents block below it is not (an unclosed flow map).
    syntax = join(dir, 'syntax.yaml');
    writeFileSync(syntax, 'api:\n  api_key: s3cret\n  auth_enabled: true\nagents:\n  claude: {type: claude\ndefaults:\n  timeout: 1\n');
    typed = join(dir, 'typed.yaml');
    writeFileSync(typed, 'api:\n  api_key: s3cret\n  auth_enabled: true\nagents:\n  claude:\n    type: claude\ndefaults:\n  timeout: soon\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const syntaxLine = () => new RegExp(`^Error: ${esc(syntax)}:6:1: agents\\.claude(\\.type)?: YAML syntax error: [^\\n]+\\n$`);
  const typedLine = () => `Error: ${typed}:8:3: defaults.timeout: must be an integer, got "soon"\n`;

  it('conductor with api.api_key and a YAML error elsewhere: exit 2, file:line named, nothing listens', async () => {
    const res = await runCli(['--host', '127.0.0.1', '--port', '0', '--root', root, '--config', syntax], { bin: CONDUCTOR, env, cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(syntaxLine());
    expect(res.stdout).not.toContain('listening');
  });

  it('conductor with a value of the wrong type: exit 2 naming the key and its line', async () => {
    const res = await runCli(['--host', '127.0.0.1', '--port', '0', '--root', root, '--config', typed], { bin: CONDUCTOR, env, cwd: dir });
    expect(res).toMatchObject({ code: 2, stderr: typedLine() });
    expect(res.stdout).not.toContain('listening');
  });

  it('conductor with --config naming a missing file: exit 2; a discovered config that does not exist is no error', async () => {
    const missing = join(dir, 'missing.yaml');
    const res = await runCli(['--host', '127.0.0.1', '--port', '0', '--root', root, '--config', missing], { bin: CONDUCTOR, env, cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(new RegExp(`^Error: ${esc(missing)}: read config: ENOENT[^\\n]*\\n$`));
    const list = await runCli(['list'], { env, cwd: dir });
    expect(list.code).toBe(0);
  });

  it.each([
    ['status', []],
    ['list', []],
    ['list', ['--json']],
    ['task', ['--project', 'p', '--prompt', 'x', '--agent', 'claude']],
    ['job', ['--project', 'p', '--prompt', 'x', '--agent', 'claude']],
    ['bus', ['read', '--project', 'p']],
  ])('run-agent %s %j with a broken --config: exit 2 with the same line, nothing written', async (cmd, args) => {
    for (const [file, line] of [
      [syntax, syntaxLine()],
      [typed, typedLine()],
    ] as const) {
      const res = await runCli([cmd, ...args, '--config', file], { env, cwd: dir });
      expect(res.code).toBe(2);
      let last = res.stderr.trim().split('\n').pop()!;
      if (args.includes('--json')) {
        // under --json the error is one JSON line on stderr
        const { error } = JSON.parse(last) as { error: { code: string; message: string } };
        expect(error.code).toBe('INVALID_CONFIG');
        last = `Error: ${error.message}`;
      }
      if (typeof line === 'string') expect(last).toContain(line.replace(/^Error: /, '').trim());
      else expect(`Error: ${last.replace(/^Error: (resolve runs dir: )?/, '')}\n`).toMatch(line);
    }
    expect(readdirSync(join(dir, 'home'))).toEqual([]);
  });
});
