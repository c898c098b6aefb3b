import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queueDir } from '@app/runner';
import { startCli, StartedCli } from '../../utils/cli';
import { scriptedServer, ScriptedServer, sseEvent } from '../../utils/scripted-http';
import { waitFor } from '../../utils/wait';
import { cliEnv, PROJECT, taskId } from '../runner/helpers';

// Strict FIFO of max_concurrent_runs across real processes: each waiter is a `run-agent job`
// process; the agent is xai pointed at a real local HTTP server that holds every answer until the
// test releases it, so the order in which runs get the one slot is observed, not timed.
describe('run slots are served first in, first out across run-agent processes (#18)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slot-fifo-'));
  const root = join(dir, 'runs');
  const home = join(dir, 'home');
  let server: ScriptedServer;
  const held: { prompt: string; res: ServerResponse }[] = [];
  const started: StartedCli[] = [];

  beforeAll(async () => {
    server = await scriptedServer([(res, _req, body) => void held.push({ prompt: JSON.parse(body).messages[0].content as string, res })]);
  });
  afterAll(async () => {
    for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const answer = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(sseEvent({ choices: [{ index: 0, delta: { content: 'ok' } }] }) + 'data: [DONE]\n\n');
  };
  const queued = () => (existsSync(queueDir(root)) ? readdirSync(queueDir(root)) : []);

  it('waiters get the slot in arrival order; a SIGKILLed waiter does not block the queue', async () => {
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `agents:\n  grok:\n    type: xai\n    token: k\n    base_url: ${server.url}/v1\ndefaults:\n  max_concurrent_runs: 1\n`);
    const job = (name: string) => {
      const cli = startCli(['job', '--root', root, '--config', config, '--project', PROJECT, '--task', taskId(`fifo-${name}`), '--agent', 'grok', '--prompt', `job-${name}`], { env: cliEnv(home) });
      started.push(cli);
      return cli;
    };

    const first = job('1');
    await waitFor('job-1 to hold the slot', () => held.length === 1, 60_000);
    const waiters = [job('2')];
    await waitFor('job-2 to queue', () => queued().length === 1, 60_000);
    const before = queued();
    const ghost = job('ghost');
    const ghostMarker = await waitFor('the ghost to queue', () => queued().find((n) => !before.includes(n)), 60_000);
    ghost.child.kill('SIGKILL');
    expect((await ghost.done).signal).toBe('SIGKILL');
    // a SIGKILLed waiter leaves its marker behind, unlocked: the next live waiter that scans the
    // queue (job-2 polling, or job-3 arriving: whichever is first) removes it
    waiters.push(job('3'));
    await waitFor('job-3 to queue', () => queued().length === 2 && !queued().includes(ghostMarker), 60_000);
    waiters.push(job('4'));
    await waitFor('job-4 to queue', () => queued().length === 3, 60_000);

    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const next = await waitFor(`request ${i + 1}`, () => held[0], 60_000);
      // one slot: never two runs at the provider at once
      expect(held).toHaveLength(1);
      order.push(/job-(\w+)/.exec(next.prompt)![1]);
      held.shift();
      answer(next.res);
    }
    expect(order).toEqual(['1', '2', '3', '4']);
    for (const cli of [first, ...waiters]) expect((await cli.done).code).toBe(0);
    expect(queued()).toEqual([]);
  });
});
