import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo, writeCancelled } from '@app/storage';
import { liveGroupLeader, PROJECT, RUN_AGENT, runningInfo, Sandbox, writeRun } from './helpers';
import { waitFor } from '../../utils/wait';
import { processAlive } from '../../utils/processes';

const START = 'task-20260101-000000-start';
const RESUME = 'task-20260101-000000-resume';
const RECOVER = 'task-20260101-000000-recover';
const FINAL = 'task-20260101-000000-final';
const CANCEL = 'task-20260101-000000-cancel';
const DONE = 'task-20260101-000000-done';

describe('run-agent monitor (built CLI)', () => {
  let sb: Sandbox;
  let todo: string;
  let leader: number;
  beforeEach(() => {
    sb = new Sandbox();
    todo = join(sb.dir, 'TODOs.md');
    writeFileSync(
      todo,
      [
        '# Work',
        `- [ ] ${START} write the greeting module`,
        `- [ ] ${RESUME} retry me`,
        `- [ ] ${RECOVER} stuck one`,
        `- [ ] ${FINAL} finished one`,
        `- [ ] ${CANCEL} cancelled one`,
        `- [x] ${DONE} already ticked`,
        '',
      ].join('\n'),
    );
    writeRun(sb.root, PROJECT, RESUME, '20260101-0000000000-1-1', {
      status: 'failed',
      exit_code: 1,
    });
    leader = liveGroupLeader().pid!;
    writeRun(sb.root, PROJECT, RECOVER, '20260101-0000000000-1-1', runningInfo(leader, 3_600_000));
    const finalRun = writeRun(sb.root, PROJECT, FINAL, '20260101-0000000000-1-1');
    writeFileSync(join(finalRun, 'output.md'), 'finished\n');
    mkdirSync(join(sb.root, PROJECT, CANCEL), { recursive: true });
    writeCancelled(join(sb.root, PROJECT, CANCEL), 'dropped');
    writeRun(sb.root, PROJECT, CANCEL, '20260101-0000000000-1-1', {
      status: 'failed',
      exit_code: 1,
    });
  });
  afterEach(() => {
    try {
      process.kill(-leader, 'SIGKILL');
    } catch {
      // already stopped by the monitor
    }
    sb.cleanup();
  });

  const args = (extra: string[]): string[] => [
    'monitor',
    '--root',
    sb.root,
    '--project',
    PROJECT,
    '--todo',
    todo,
    '--stale-after',
    '1m',
    '--rate-limit',
    '1ms',
    ...extra,
  ];
  const runsOf = (task: string): string[] => (existsSync(join(sb.root, PROJECT, task, 'runs')) ? readdirSync(join(sb.root, PROJECT, task, 'runs')) : []);

  it('--dry-run prints the four actions and changes nothing', async () => {
    const before = readFileSync(todo, 'utf8');
    const res = await sb.run(args(['--once', '--dry-run']));
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n').slice(0, 6)).toEqual([
      `monitor: checking 5 pending task(s) from ${todo}`,
      `  [start   ] ${START} — no task folder yet`,
      `  [resume  ] ${RESUME} — run 20260101-0000000000-1-1 failed`,
      expect.stringMatching(new RegExp(`^  \\[recover \\] ${RECOVER} — run 20260101-0000000000-1-1 alive but no FACT/DECISION/ERROR/REVIEW for \\d+s$`)),
      `  [finalize] ${FINAL} — run 20260101-0000000000-1-1 completed with output`,
      `  [skip    ] ${CANCEL} — task is CANCELLED`,
    ]);
    expect(readFileSync(todo, 'utf8')).toBe(before);
    expect(existsSync(join(sb.root, PROJECT, START))).toBe(false);
    expect(runsOf(RESUME)).toHaveLength(1);
    expect(existsSync(join(sb.root, PROJECT, FINAL, 'DONE'))).toBe(false);
    expect(processAlive(leader)).toBe(true);
  });

  it('--once starts, resumes, recovers and finalizes, passing the TODO text as the prompt', async () => {
    const dumps = join(sb.dir, 'dumps');
    mkdirSync(dumps);
    const res = await sb.run(args(['--once', '--agent', 'codex', '--stop-grace', '2s']), { env: { FAKE_AGENT_ENV_DUMP: dumps } });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    for (const t of [START, RESUME, RECOVER]) {
      expect(res.stdout).toContain(`  [OK]    launched job for ${t}\n`);
      expect(res.stdout).toMatch(new RegExp(`  \\[OK\\]    run completed for ${t} `));
    }
    expect(res.stdout).toContain(`  [OK]    stopped stale task ${RECOVER}\n`);
    expect(res.stdout).toContain(`  [OK]    finalized ${FINAL} (DONE created)\n`);

    expect(readFileSync(join(sb.root, PROJECT, START, 'TASK.md'), 'utf8')).toBe(`${START} write the greeting module\n`);
    const stdins = readdirSync(dumps).map((f) => (JSON.parse(readFileSync(join(dumps, f), 'utf8')) as { stdin: string }).stdin);
    expect(stdins.some((s) => s.includes(`${START} write the greeting module`))).toBe(true);
    expect(stdins.some((s) => s.includes(`${RECOVER} stuck one`))).toBe(true);

    expect(runsOf(START)).toHaveLength(1);
    expect(runsOf(RESUME)).toHaveLength(2);
    expect(runsOf(RECOVER)).toHaveLength(2);
    expect(processAlive(leader)).toBe(false);
    const stale = readRunInfo(join(sb.root, PROJECT, RECOVER, 'runs', '20260101-0000000000-1-1', 'run-info.yaml'));
    expect(stale.status).toBe('failed');
    expect(runsOf(CANCEL)).toHaveLength(1);

    expect(readFileSync(join(sb.root, PROJECT, FINAL, 'DONE'), 'utf8')).toBe('');
    const todoText = readFileSync(todo, 'utf8');
    expect(todoText).toContain(`- [x] ${FINAL} finished one\n`);
    expect(todoText).toContain(`- [ ] ${START} write the greeting module\n`);

    // Second pass: the launched runs completed with output, so they are finalized now.
    const again = await sb.run(args(['--once', '--agent', 'codex']));
    expect(again.code).toBe(0);
    for (const t of [START, RESUME, RECOVER]) expect(again.stdout).toContain(`  [OK]    finalized ${t} (DONE created)\n`);
    const third = await sb.run(args(['--once']));
    expect(third.stdout).toBe(`monitor: checking 1 pending task(s) from ${todo}\n  [skip    ] ${CANCEL} — task is CANCELLED\n`);
  });

  it('without --agent or a config it skips launches; bad flags are usage errors', async () => {
    const res = await sb.run(args(['--once']));
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`  [SKIP]  ${START}: --agent or a config with agents is required to start/resume tasks\n`);
    expect(res.stdout).toContain(`  [OK]    finalized ${FINAL} (DONE created)\n`);
    expect(await sb.run(['monitor', '--root', sb.root, '--todo', todo])).toMatchObject({ code: 2, stderr: 'Error: --project is required\n' });
    expect(await sb.run(args(['--interval', 'soon']))).toMatchObject({
      code: 2,
    });
    expect((await sb.run(['monitor', '--root', sb.root, '--project', PROJECT, '--todo', join(sb.dir, 'missing.md')])).stderr).toBe(
      `Error: TODO file not found: ${join(sb.dir, 'missing.md')}\n`,
    );
  });

  it('daemon mode holds the project lock, reacts to TODO changes and releases the lock on SIGTERM', async () => {
    writeFileSync(todo, '# nothing yet\n');
    const lockPath = join(sb.root, PROJECT, '.monitor.pid');
    const daemon = spawn(process.execPath, [RUN_AGENT, ...args(['--interval', '1h', '--agent', 'codex'])], {
      cwd: sb.dir,
      env: sb.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    daemon.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const closed = new Promise((r) => daemon.once('close', r));
    try {
      await checkDaemon();
    } finally {
      if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
    }

    async function checkDaemon(): Promise<void> {
      await waitFor(() => stdout.includes('no pending task IDs'));
      expect(readFileSync(lockPath, 'utf8')).toBe(`${daemon.pid}\n`);
      const second = await sb.run(args(['--interval', '1h']));
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`Error: monitor already running for project "${PROJECT}" (PID ${daemon.pid}); lockfile: ${lockPath}\n`);

      writeFileSync(todo, `- [ ] ${START} started by a file change\n`);
      await waitFor(() => stdout.includes(`  [OK]    run completed for ${START}`));
      expect(runsOf(START)).toHaveLength(1);
      daemon.kill('SIGTERM');
      await closed;
      expect(existsSync(lockPath)).toBe(false);
    }
  });
});
