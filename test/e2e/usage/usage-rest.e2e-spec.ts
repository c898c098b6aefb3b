import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { queueDir, RATE_LIMITED_FILE, runJob, runTask } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { Handler, ScriptedServer, sseEvent, sseReply } from '../../utils/scripted-http';
import { busMessages, cliEnv, PROJECT, runInfos, taskId, waitFor } from '../runner/helpers';
import { runCli } from '../../utils/cli';
import { restAgentSandbox } from './rest-sandbox';
import { loopParts } from '../../utils/loop-parts';

const runsInOrder = (taskDir: string) => runInfos(taskDir).sort((a, b) => a.start_time.getTime() - b.start_time.getTime());
const delta = (content: string) => sseEvent({ choices: [{ index: 0, delta: { content } }] });

// REST agents (xai, perplexity) pointed at real local HTTP servers through their base_url setting.
describe('REST agents: usage accounting and HTTP 429 rate limits (#18)', () => {
  const { tmp, layout, home, serve } = restAgentSandbox('usage-rest-home-');

  it('records the response usage in run-info and the usage report sums the tree (xai root, perplexity child)', async () => {
    const grok = await serve(sseReply(delta('grok says') + sseEvent({ choices: [], usage: { prompt_tokens: 500, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 100 }, cost_in_usd_ticks: 25_000_000 } }) + 'data: [DONE]\n\n'));
    const cost = { input_tokens_cost: 0.0001, output_tokens_cost: 0.0001, request_cost: 0.005, total_cost: 0.0052 };
    const pplx = await serve(sseReply(sseEvent({ choices: [{ index: 0, delta: { content: 'pplx says' } }], usage: { prompt_tokens: 70, completion_tokens: 9, total_tokens: 79, cost } }) + 'data: [DONE]\n\n'));
    const config = {
      agents: {
        grok: { name: 'grok', type: 'xai', token: 'k', base_url: `${grok.url}/v1` },
        pplx: { name: 'pplx', type: 'perplexity', token: 'k', base_url: `${pplx.url}/chat/completions` },
      },
    } as never;
    const [a, b] = [taskId('rest-root'), taskId('rest-child')];
    const root = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: a, prompt: 'ask', config, agent: 'grok' });
    expect(root.error).toBeUndefined();
    const child = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: b, prompt: 'ask more', config, agent: 'pplx', parentRunId: root.runId });
    expect(child.error).toBeUndefined();
    expect(readFileSync(join(root.runDir, 'output.md'), 'utf8')).toBe('grok says');

    expect(runInfos(layout.taskDir(PROJECT, a))[0].usage).toEqual({ input_tokens: 500, output_tokens: 40, cache_read_tokens: 100, cache_write_tokens: 0, cost_usd: 0.0025 });
    expect(runInfos(layout.taskDir(PROJECT, b))[0].usage).toEqual({ input_tokens: 70, output_tokens: 9, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.0052 });

    const env = cliEnv(home);
    const report = JSON.parse((await runCli(['usage', '--root', tmp.root, '--project', PROJECT, '--task', a, '--json'], { env })).stdout);
    expect(report.tree).toEqual({ runs: 2, total_tokens: 619, usage: { input_tokens: 570, output_tokens: 49, cache_read_tokens: 100, cache_write_tokens: 0, cost_usd: 0.0077 } });
    expect(report.by_agent.map((r: { key: string; total_tokens: number }) => [r.key, r.total_tokens])).toEqual([['perplexity', 79], ['xai', 540]]);
    const status = JSON.parse((await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', b, '--json'], { env })).stdout);
    expect(status.tasks[0].usage).toEqual({ input_tokens: 70, output_tokens: 9, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.0052, total_tokens: 79 });
  });

  it('a job refused with 429 and Retry-After in seconds: a failed, non-fatal run carrying resume_at', async () => {
    const s = await serve((res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '120' });
      res.end('{"error":"too many requests"}');
    });
    const config = { agents: { pplx: { name: 'pplx', type: 'perplexity', token: 'k', base_url: `${s.url}/chat/completions` } } } as never;
    const task = taskId('rest-429s');
    const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'ask', config, agent: 'pplx' });
    expect(result).toMatchObject({ ok: false, info: { status: 'failed', exit_code: 1 } });
    expect(result.fatal).toBeFalsy();
    const resumeAt = result.info!.resume_at!.getTime();
    expect(resumeAt).toBeGreaterThanOrEqual(s.requests[0].at + 120_000);
    expect(resumeAt).toBeLessThanOrEqual(result.info!.end_time.getTime() + 120_000);
    expect(s.requests).toHaveLength(1); // no retry inside the run
    expect(runInfos(layout.taskDir(PROJECT, task))[0].resume_at!.getTime()).toBe(resumeAt);
    expect(result.error).toContain(`rate limited until ${result.info!.resume_at!.toISOString()}`);
  });

  it('429 with Retry-After: rate_limited until then, no restart counted, the slot goes to others, the task resumes ahead of newer waiters and completes', async () => {
    const root = join(tmp.root, '..', 'rl-rest-runs');
    const rl = new RunsLayout(root);
    const [a, b, c] = [taskId('rl-a'), taskId('rl-b'), taskId('rl-c')];
    const done = (task: string): Handler => (res, req, body) => {
      // the stand-in for the agent's work: the answer of a task's run finishes the task
      writeFileSync(join(rl.taskDir(PROJECT, task), 'DONE'), '');
      sseReply(delta(`answer for ${task}`))(res, req, body);
    };
    let resetAt: Date | undefined;
    const serverA = await serve((res) => {
      resetAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3000);
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': resetAt.toUTCString() });
      res.end('{"error":{"message":"rate limit reached"}}');
    }, done(a));
    let heldB: ServerResponse | undefined;
    const serverB = await serve((res) => void (heldB = res));
    const serverC = await serve(done(c));
    const config = {
      agents: Object.fromEntries(
        [['grok-a', serverA], ['grok-b', serverB], ['grok-c', serverC]].map(([name, s]) => [name, { name, type: 'xai', token: 'k', base_url: `${(s as ScriptedServer).url}/v1` }]),
      ),
      defaults: { max_concurrent_runs: 1 },
    } as never;
    const loop = (task: string, agent: string) => runTask({ ...loopParts, root, projectId: PROJECT, taskId: task, prompt: `work on ${task}`, agent, config, maxRestarts: 0, restartDelayMs: 10, holdPollMs: 50 });

    const loopA = loop(a, 'grok-a');
    const taskDirA = rl.taskDir(PROJECT, a);
    await waitFor('A to be rate limited', () => existsSync(join(taskDirA, RATE_LIMITED_FILE)), 30_000);
    const [refused] = runsInOrder(taskDirA);
    expect(refused).toMatchObject({ agent: 'xai', status: 'failed', exit_code: 1 });
    expect(refused.resume_at!.toISOString()).toBe(resetAt!.toISOString());
    expect(refused.error_summary).toContain('status 429');
    const status = await waitFor(async () => {
      const s = JSON.parse((await runCli(['status', '--root', root, '--project', PROJECT, '--task', a, '--json'], { env: cliEnv(home) })).stdout).tasks[0];
      return s.status === 'rate_limited' ? s : undefined;
    });
    expect(status.resume_at).toBe(resetAt!.toISOString());

    // while A waits, B takes the released slot (its answer is held), and C queues behind B
    const loopB = loop(b, 'grok-b');
    await waitFor('B to hold the slot', () => heldB, 30_000);
    expect(serverB.requests[0].at).toBeLessThan(resetAt!.getTime());
    const loopC = loop(c, 'grok-c');
    await waitFor('C to queue', () => existsSync(queueDir(root)) && readdirSync(queueDir(root)).length === 1, 30_000);
    // after the reset A queues again, at the place of its refused run: ahead of C
    await waitFor('A to re-queue', () => !existsSync(join(taskDirA, RATE_LIMITED_FILE)) && readdirSync(queueDir(root)).length === 2, 30_000);
    const markers = readdirSync(queueDir(root));
    const runDirs = (task: string) => readdirSync(join(rl.taskDir(PROJECT, task), 'runs'));
    const markerA = markers.find((n) => runDirs(a).includes(n))!;
    const markerC = markers.find((n) => runDirs(c).includes(n))!;
    const ticket = (marker: string) => Number(/^ticket: (\d+)$/m.exec(readFileSync(join(queueDir(root), marker), 'utf8'))![1]);
    expect(ticket(markerA)).toBeLessThan(ticket(markerC));
    heldB!.writeHead(200, { 'content-type': 'text/event-stream' });
    writeFileSync(join(rl.taskDir(PROJECT, b), 'DONE'), '');
    heldB!.end(delta('B done'));

    const [resA, resB, resC] = await Promise.all([loopA, loopB, loopC]);
    expect([resA.status, resB.status, resC.status]).toEqual(['done', 'done', 'done']);
    const runsA = runsInOrder(taskDirA);
    expect(runsA).toHaveLength(2);
    expect(runsA[1].start_time.getTime()).toBeGreaterThanOrEqual(resetAt!.getTime());
    // FIFO: A's resumed run (older ticket) got the slot before C, which had queued first
    expect(serverA.requests[1].at).toBeLessThanOrEqual(serverC.requests[0].at);
    const bodies = busMessages(rl.taskBus(PROJECT, a)).map((m) => `${m.type} ${m.body}`);
    expect(bodies).toContain(`INFO rate limited until ${resetAt!.toISOString()}: waiting without counting a restart (run slot released)`);
    expect(bodies.filter((x) => x.startsWith('INFO starting root agent'))).toEqual(['INFO starting root agent (restart #0)', 'INFO starting root agent (restart #1)']);
  });
});
