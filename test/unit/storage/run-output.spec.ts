import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createChangeFeed, createLivenessProbe, followRunOutput, followRunStdout, readRunOutput, updateRunInfo } from '@app/storage';
import { killGroup, Sandbox, seedRun, running, spawnSleeper } from '../../utils/run-fixtures';
import { waitFor } from '../../utils/wait';

describe('run output through the shared FileTail', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  it('prints a finished run once (output.md, else agent-stdout.txt), with --tail', () => {
    const dir = seedRun(sb.root, 'p', 't', 'r1', {}, 'a\nb\r\nc\n');
    expect(readRunOutput(dir, 'output', 2)).toBe('b\nc\n');
    writeFileSync(join(dir, 'output.md'), 'final\n');
    expect(readRunOutput(dir, 'output', 0)).toBe('final\n');
    expect(() => readRunOutput(dir, 'stderr', 0)).not.toThrow();
  });

  it('follows a live run until it ends, then reads what is left', async () => {
    const agent = spawnSleeper(60);
    try {
      const dir = seedRun(sb.root, 'p', 't', 'r1', running(agent.pid!), 'first\n');
      const feed = createChangeFeed();
      let out = '';
      const follow = followRunOutput(dir, 'output', { feed, probe: createLivenessProbe(), write: (t) => (out += t) });
      await waitFor('first chunk', () => out === 'first\n');
      appendFileSync(join(dir, 'agent-stdout.txt'), 'second\n');
      await waitFor('second chunk', () => out === 'first\nsecond\n');
      appendFileSync(join(dir, 'agent-stdout.txt'), 'last\n');
      await updateRunInfo(join(dir, 'run-info.yaml'), (i) => ({ ...i, status: 'completed', exit_code: 0, end_time: new Date() }));
      await expect(follow).resolves.toBe('ended');
      expect(out).toBe('first\nsecond\nlast\n');
    } finally {
      killGroup(agent);
    }
  });

  it('ends a follow whose run died (reconciled) and one that is interrupted', async () => {
    const agent = spawnSleeper(60);
    const dir = seedRun(sb.root, 'p', 't', 'r1', running(agent.pid!), 'x\n');
    const feed = createChangeFeed();
    const interrupt = new AbortController();
    const interrupted = followRunOutput(dir, 'stdout', { feed, probe: createLivenessProbe(), write: () => undefined, signal: interrupt.signal });
    interrupt.abort();
    await expect(interrupted).resolves.toBe('interrupted');
    killGroup(agent);
    await waitFor('agent gone', () => agent.exitCode !== null || agent.signalCode !== null);
    let out = '';
    await expect(followRunOutput(dir, 'stdout', { feed, probe: createLivenessProbe(), write: (t) => (out += t) })).resolves.toBe('ended');
    expect(out).toBe('x\n');
  });

  it('job --follow copies agent-stdout.txt until the job settles, including bytes written last', async () => {
    const dir = seedRun(sb.root, 'p', 't', 'r1');
    let out = '';
    let settle!: () => void;
    const done = new Promise<void>((r) => (settle = r));
    const follow = followRunStdout(dir, done, { feed: createChangeFeed(), write: (t) => (out += t), pollMs: 20 });
    appendFileSync(join(dir, 'agent-stdout.txt'), 'héllo ');
    await waitFor('streamed', () => out === 'héllo ');
    appendFileSync(join(dir, 'agent-stdout.txt'), 'end\n');
    settle();
    await follow;
    expect(out).toBe('héllo end\n');
  });
});
