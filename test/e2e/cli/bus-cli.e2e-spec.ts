import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusWriter, readMessages } from '@app/messagebus';
import { tempDir } from '../../unit/messagebus/tmp';
import { cleanEnv, requireBuild, runCli, runAgentBin, snapshotTree } from './bus-helpers';

const TASK = 'task-20260101-000000-abc';

describe('run-agent bus post | read | discover', () => {
  let dir: string;
  let cleanup: () => void;
  let root: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(() => requireBuild());
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('bus-cli-'));
    root = join(dir, 'runs');
    mkdirSync(join(root, 'proj', TASK, 'runs', '20260101-0000000000-1-1'), { recursive: true });
    env = cleanEnv(dir);
  });
  afterEach(() => cleanup());

  const taskBus = () => join(root, 'proj', TASK, 'TASK-MESSAGE-BUS.md');

  it('posts to the task bus named by flags and prints msg_id', () => {
    const r = runCli(['bus', 'post', '--root', root, '--project', 'proj', '--task', TASK, '--run', 'r-7', '--type', 'FACT', '--body', 'hello'], { env, cwd: dir });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [m] = readMessages(taskBus());
    expect(r.stdout).toBe(`msg_id: ${m.msg_id}\n`);
    expect(m).toMatchObject({ type: 'FACT', project_id: 'proj', task_id: TASK, run_id: 'r-7', body: 'hello' });
  });

  it('takes the body from stdin, threads with --parent, links files and infers ids from JRUN_* variables', () => {
    const runFolder = join(root, 'proj', TASK, 'runs', '20260101-0000000000-1-1');
    const jenv = { ...env, JRUN_MESSAGE_BUS: taskBus(), JRUN_RUN_FOLDER: runFolder };
    const first = runCli(['bus', 'post'], { env: jenv, cwd: dir, input: 'from stdin\n---\nstill body\n' });
    expect(first.code).toBe(0);
    const parentId = first.stdout.trim().replace('msg_id: ', '');
    const second = runCli(['bus', 'post', '--parent', parentId, '--link', '/tmp/big.log', '--body', 'reply'], { env: jenv, cwd: dir });
    expect(second.code).toBe(0);
    const [a, b] = readMessages(taskBus());
    expect(a).toMatchObject({ type: 'INFO', project_id: 'proj', task_id: TASK, run_id: '20260101-0000000000-1-1', body: 'from stdin\n---\nstill body\n' });
    expect(b).toMatchObject({ parents: [{ msg_id: parentId }], links: [{ url: '/tmp/big.log' }], body: 'reply' });
  });

  it('reads the tail in upstream format, as JSON, and after a since id', async () => {
    const writer = new BusWriter(join(root, 'proj', 'PROJECT-MESSAGE-BUS.md'));
    const all = await Promise.all(Array.from({ length: 25 }, (_, i) => writer.append({ type: 'INFO', project_id: 'proj', task_id: '', run_id: '', body: `m${i}` })));
    writer.close();
    const r = runCli(['bus', 'read', '--root', root, '--project', 'proj'], { env, cwd: dir });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \(INFO\) m5$/);
    const json = runCli(['bus', 'read', '--root', root, '--project', 'proj', '--tail', '2', '--json'], { env, cwd: dir });
    expect(json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).body)).toEqual(['m23', 'm24']);
    const since = runCli(['bus', 'read', '--root', root, '--project', 'proj', '--since', all[21].msg_id, '--tail', '0'], { env, cwd: dir });
    expect(since.stdout.trimEnd().split('\n').map((l) => l.replace(/^.*\(INFO\) /, ''))).toEqual(['m22', 'm23', 'm24']);
    const missing = runCli(['bus', 'read', '--root', root, '--project', 'proj', '--since', 'MSG-NOPE'], { env, cwd: dir });
    expect(missing).toMatchObject({ code: 2, stderr: 'Error: since id "MSG-NOPE" not found\n' });
  });

  it('discovers the nearest bus walking up, and resolves reads from the working directory', () => {
    writeFileSync(taskBus(), '');
    const runDir = join(root, 'proj', TASK, 'runs', '20260101-0000000000-1-1');
    expect(runCli(['bus', 'discover'], { env, cwd: runDir })).toMatchObject({ code: 0, stdout: `${taskBus()}\n` });
    expect(runCli(['bus', 'discover', '--from', runDir], { env, cwd: dir }).stdout).toBe(`${taskBus()}\n`);
    const none = runCli(['bus', 'discover', '--from', dir], { env, cwd: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^Error: no message bus file found from ".*" \(searched for TASK-MESSAGE-BUS.md, PROJECT-MESSAGE-BUS.md, MESSAGE-BUS.md\)\n$/);
    expect(runCli(['bus', 'post', '--body', 'found by discovery'], { env, cwd: runDir }).code).toBe(0);
    expect(runCli(['bus', 'read'], { env, cwd: runDir }).stdout).toMatch(/\(INFO\) found by discovery\n$/);
  });

  it('follows new messages and continues after rotation', async () => {
    const bus = join(root, 'proj', 'PROJECT-MESSAGE-BUS.md');
    runCli(['bus', 'post', '--root', root, '--project', 'proj', '--body', 'existing'], { env, cwd: dir });
    const child = spawn(runAgentBin, ['bus', 'read', '--root', root, '--project', 'proj', '--follow'], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let exited = false;
    const waiters: Array<() => void> = [];
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      waiters.splice(0).forEach((w) => w());
    });
    child.on('exit', () => {
      exited = true;
      waiters.splice(0).forEach((w) => w());
    });
    const untilPrinted = (text: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (out.includes(text)) resolve();
          else if (exited) reject(new Error(`follow exited before printing ${text}: ${out}`));
          else waiters.push(check);
        };
        check();
      });
    try {
      await untilPrinted('(INFO) existing');
      runCli(['bus', 'post', '--root', root, '--project', 'proj', '--body', 'live one'], { env, cwd: dir });
      await untilPrinted('(INFO) live one');
      renameSync(bus, `${bus}.20260101-000000.archived`);
      runCli(['bus', 'post', '--root', root, '--project', 'proj', '--body', 'after rotation'], { env, cwd: dir });
      await untilPrinted('(INFO) after rotation');
      expect(out.match(/\(INFO\) existing/g)).toHaveLength(1);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('posting to a new project creates its folder (a fresh machine: no runs root yet)', () => {
    const fresh = join(dir, 'fresh-root');
    const post = runCli(['bus', 'post', '--root', fresh, '--project', 'demo', '--body', 'hello'], { env, cwd: dir });
    expect(post.stderr).toBe('');
    expect(post.code).toBe(0);
    expect(post.stdout).toMatch(/^msg_id: \S+\n$/);
    const read = runCli(['bus', 'read', '--root', fresh, '--project', 'demo'], { env, cwd: dir });
    expect(read.code).toBe(0);
    expect(read.stdout).toContain('hello');
  });

  describe('bad input: one-line error, non-zero exit, nothing changed', () => {
    const cases: Array<[string, string[], RegExp, Record<string, string>?, string?]> = [
      ['invalid project id', ['--project', 'Bad_Project'], /^Error: invalid project ID "Bad_Project": /],
      ['project path escape', ['--project', '../escape'], /^Error: invalid project ID "\.\.\/escape": /],
      ['task path escape', ['--project', 'proj', '--task', '../../escape'], /^Error: invalid task ID "\.\.\/\.\.\/escape": /],
      ['malformed task id', ['--project', 'proj', '--task', 'not-a-task'], /^Error: invalid task ID "not-a-task": /],
      ['run path escape', ['--project', 'proj', '--run', '../r'], /^Error: invalid run ID "\.\.\/r": /],
      ['unknown flag', ['--project', 'proj', '--bogus'], /^Error: unknown option '--bogus'$/],
      ['flag without value', ['--project', 'proj', '--body'], /^Error: option '--body <text>' argument missing$/],
      ['empty type', ['--project', 'proj', '--type', ''], /^Error: --type must not be empty$/],
      ['over-limit body', ['--project', 'proj', '--max-body-bytes', '65536', '--body', 'x'.repeat(64 * 1024 + 1)], /^Error: message body is 65537 bytes, over the 65536-byte limit; .*--link/],
      ['over-limit stdin body', ['--project', 'proj'], /^Error: message body is 70000 bytes, over the 65536-byte limit/, { CONDUCTOR_MAX_MESSAGE_BODY_BYTES: '65536' }, 'y'.repeat(70000)],
      ['missing task folder', ['--project', 'ghost', '--task', 'task-20260101-000000-nosuch', '--body', 'x'], /^Error: open message bus ".*ghost\/task-20260101-000000-nosuch\/TASK-MESSAGE-BUS.md": its folder .*nosuch does not exist \(check --root\/--project\/--task;.*\)$/],
    ];

    it.each(cases)('%s', (_name, args, message, extraEnv = {}, input = '') => {
      const before = snapshotTree(dir);
      const r = runCli(['bus', 'post', '--root', root, ...args], { env: { ...env, ...extraEnv }, cwd: dir, input });
      expect([1, 2]).toContain(r.code);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')).toHaveLength(2);
      expect(r.stderr.trimEnd()).toMatch(message);
      expect(snapshotTree(dir)).toEqual(before);
    });

    it('refuses a symlinked bus path (via JRUN_MESSAGE_BUS and via --project)', () => {
      const target = join(dir, 'elsewhere.md');
      writeFileSync(target, 'keep\n');
      symlinkSync(target, taskBus());
      const before = snapshotTree(dir);
      for (const r of [
        runCli(['bus', 'post', '--body', 'x'], { env: { ...env, JRUN_MESSAGE_BUS: taskBus() }, cwd: dir }),
        runCli(['bus', 'post', '--root', root, '--project', 'proj', '--task', TASK, '--body', 'x'], { env, cwd: dir }),
        runCli(['bus', 'read', '--root', root, '--project', 'proj', '--task', TASK], { env, cwd: dir }),
      ]) {
        expect(r.code).toBe(1);
        expect(r.stderr).toBe(`Error: message bus path "${taskBus()}" is a symlink\n`);
      }
      expect(snapshotTree(dir)).toEqual(before);
      expect(readFileSync(target, 'utf8')).toBe('keep\n');
    });

    it('refuses a bus path that is a directory', () => {
      mkdirSync(taskBus());
      const before = snapshotTree(dir);
      const r = runCli(['bus', 'post', '--root', root, '--project', 'proj', '--task', TASK, '--body', 'x'], { env, cwd: dir });
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: `Error: message bus path "${taskBus()}" is not a regular file\n` });
      expect(snapshotTree(dir)).toEqual(before);
    });

    it('rejects bad ids and a bad --tail on read', () => {
      const before = snapshotTree(dir);
      const bad = runCli(['bus', 'read', '--root', root, '--project', '../x'], { env, cwd: dir });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/^Error: invalid project ID "\.\.\/x": .*\n$/);
      const tail = runCli(['bus', 'read', '--root', root, '--project', 'proj', '--tail', 'many'], { env, cwd: dir });
      expect(tail).toMatchObject({ code: 2, stderr: 'Error: invalid --tail "many": must be an integer\n' });
      expect(snapshotTree(dir)).toEqual(before);
    });
  });
});
