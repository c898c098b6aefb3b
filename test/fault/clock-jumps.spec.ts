import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { readMessages } from '@app/messagebus';
import { envWithFakeAgents } from '../utils/fake-agents';
import { startCli, type StartedCli } from '../utils/cli';
import { waitFor } from '../utils/wait';

/**
 * Wall-clock jumps under libfaketime (issue #31). Each CLI process reads its clock offset from a
 * file of its own (FAKETIME_TIMESTAMP_FILE, re-read at every call), and only the wall clock is
 * faked: the monotonic clock stays real, as with an NTP step. A rate-limit wait is measured on
 * the monotonic clock: a jump forward does not end it early, a jump back does not stretch it by
 * the jump. A webhook's `webhook-timestamp` (Standard Webhooks) is the sender's wall clock at each
 * attempt, signed with it: a receiver's tolerance check (the maintained `standardwebhooks`
 * library, 5 minutes) refuses an attempt sent while the clock was 2 h ahead, and accepts the
 * retry once the clock is right again; one webhook-id throughout.
 */
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const P = 'clock';
const describeFaketime = existsSync(LIBFAKETIME) ? describe : describe.skip;

describeFaketime('clock jumps (faketime)', () => {
  let dir: string;
  let root: string;
  const running: StartedCli[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'clock-'));
    root = join(dir, 'runs');
    mkdirSync(join(dir, 'cwd'), { recursive: true });
  });
  afterAll(() => {
    for (const r of running) if (r.child.exitCode === null) r.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A process whose wall clock is `offset` (libfaketime syntax, e.g. +0, +2h, -1d) and changes when the file does. */
  function clocked(name: string, args: string[], extra: Record<string, string>): { cli: StartedCli; jump: (offset: string) => void } {
    const file = join(dir, `${name}.faketime`);
    writeFileSync(file, '+0\n');
    const env = envWithFakeAgents({
      ...extra,
      HOME: dir,
      NODE_DISABLE_COMPILE_CACHE: '1',
      CONDUCTOR_ROOT: undefined,
      RUN_AGENT_ROOT: undefined,
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    });
    const cli = startCli(args, { env, cwd: join(dir, 'cwd') });
    running.push(cli);
    return { cli, jump: (offset) => writeFileSync(file, `${offset}\n`) };
  }

  const bodies = (task: string) => {
    const bus = join(root, P, task, 'TASK-MESSAGE-BUS.md');
    return existsSync(bus) ? readMessages(bus).map((m) => `${m.type} ${m.body}`) : [];
  };

  it('a rate-limit wait ends neither early on a jump forward nor a day late on a jump back', async () => {
    const fake = { FAKE_AGENT_RATE_LIMIT_ATTEMPTS: '1', FAKE_AGENT_DONE_ON_ATTEMPT: '2' };
    const loop = (task: string) => ['task', '--root', root, '--project', P, '--task', task, '--agent', 'claude', '--prompt', 'wait for the reset', '--max-restarts', '2', '--restart-delay', '10ms'];
    const ahead = clocked('ahead', loop('task-20260101-120000-ahead'), { ...fake, FAKE_AGENT_RATE_LIMIT_RESET_S: '10' });
    const behind = clocked('behind', loop('task-20260101-120000-behind'), { ...fake, FAKE_AGENT_RATE_LIMIT_RESET_S: '3' });
    const waiting = (task: string) => bodies(task).some((b) => b.startsWith('INFO rate limited until '));
    const reset = (task: string) => bodies(task).includes('INFO rate limit reset; resuming the task');
    await waitFor('both loops waiting out their rate limit', () => waiting('task-20260101-120000-ahead') && waiting('task-20260101-120000-behind'), { timeoutMs: 30_000 });
    // when the ahead loop's wait ends, on the real clock: stamped before its clock jumped
    const until = Date.parse(/^INFO rate limited until (\S+Z): /.exec(bodies('task-20260101-120000-ahead').find((b) => b.startsWith('INFO rate limited until '))!)![1]);
    expect(Number.isFinite(until)).toBe(true);
    ahead.jump('+1d');
    behind.jump('-1d');
    // a day back: the wait still ends after its 3 s (a wall-clock wait would last a day more)
    await waitFor('the loop whose clock went back to resume', () => reset('task-20260101-120000-behind'), { timeoutMs: 30_000 });
    // a day ahead: the reset of the provider is still ~10 s away, the wait goes on (a wall-clock wait ends at the next poll)
    await waitFor('the loop whose clock went ahead to resume', () => reset('task-20260101-120000-ahead'), { timeoutMs: 60_000 });
    // not before the provider's reset (a wall-clock wait would have ended at its next poll after the jump)
    expect(Date.now()).toBeGreaterThanOrEqual(until - 250);
    const [a, b] = await Promise.all([ahead.cli.done, behind.cli.done]);
    expect([a.code, b.code]).toEqual([0, 0]);
    for (const t of ['task-20260101-120000-ahead', 'task-20260101-120000-behind']) expect(existsSync(join(root, P, t, 'DONE'))).toBe(true);
  }, 120_000);

  it('webhook-timestamp follows the sender’s clock at each attempt; a receiver’s tolerance refuses the one sent 2 h ahead and accepts the retry', async () => {
    const whsec = `whsec_${randomBytes(32).toString('base64')}`;
    const wh = new Webhook(whsec);
    const seen: { id: string; ts: number; at: number; verified: boolean }[] = [];
    let onFirst: () => void = () => undefined;
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        let verified = true;
        try {
          wh.verify(body, req.headers as Record<string, string>);
        } catch {
          verified = false;
        }
        seen.push({ id: String(req.headers['webhook-id']), ts: Number(req.headers['webhook-timestamp']), at: Date.now() / 1000, verified });
        if (seen.length === 1) onFirst();
        res.writeHead(verified ? 200 : 400).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const config = join(dir, 'webhook.yaml');
      writeFileSync(config, `agents:\n  claude: {}\ndefaults:\n  timeout: 300\nwebhook:\n  url: ${url}\n  standard_webhooks_secret: ${whsec}\n  timeout: 5s\n`);
      const task = 'task-20260101-120000-hook';
      const job = clocked('hook', ['job', '--root', root, '--project', P, '--task', task, '--agent', 'claude', '--prompt', 'hook me', '--config', config], { FAKE_AGENT_DONE: '1' });
      job.jump('+2h');
      // the clock is set right again once the first attempt was refused (the retry follows after 1 s)
      onFirst = () => job.jump('+0');
      const out = await job.cli.done;
      expect([out.code, out.stderr]).toEqual([0, expect.any(String)]);
      expect(seen.map((s) => s.verified)).toEqual([false, true]);
      expect(new Set(seen.map((s) => s.id)).size).toBe(1);
      // each attempt carried the sender's wall clock of that moment: 2 h ahead, then right
      expect(Math.abs(seen[0].ts - seen[0].at - 7200)).toBeLessThan(120);
      expect(Math.abs(seen[1].ts - seen[1].at)).toBeLessThan(120);
      expect(bodies(task).some((b) => b.startsWith('WARN webhook delivery failed'))).toBe(false);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 60_000);
});
