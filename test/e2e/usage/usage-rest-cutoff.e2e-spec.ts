import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJob } from '@app/runner';
import { Handler, sseEvent } from '../../utils/scripted-http';
import { cliEnv, PROJECT, runInfos, taskId, waitFor } from '../runner/helpers';
import { runCli } from '../../utils/cli';
import { restAgentSandbox } from './rest-sandbox';
import { loopParts } from '../../utils/loop-parts';

const chunk = (content: string, usage?: object) => sseEvent({ choices: [{ index: 0, delta: { content } }], ...(usage ? { usage } : {}) });

/** Streams `chunks` (flushed one by one), then either drops the socket or holds it open until the server closes. */
const streamThen =
  (chunks: string[], after: 'drop' | 'hold'): Handler =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const c of chunks) res.write(c);
    if (after === 'drop') setTimeout(() => res.socket?.destroy(), 50);
  };

// A REST run cut off mid-stream still records the usage its chunks had reported, marked partial.
describe('REST agents: usage of a run cut off mid-stream', () => {
  const { tmp, layout, home, serve } = restAgentSandbox('usage-cutoff-home-');

  it('perplexity: the connection drops after chunks carrying running usage → the last usage is recorded, partial, and counted', async () => {
    const s = await serve(
      streamThen([chunk('first part ', { prompt_tokens: 120, completion_tokens: 5, cost: { total_cost: 0.001 } }), chunk('second part', { prompt_tokens: 120, completion_tokens: 17, cost: { total_cost: 0.0013 } })], 'drop'),
    );
    const config = { agents: { pplx: { name: 'pplx', type: 'perplexity', token: 'k', base_url: `${s.url}/chat/completions` } } } as never;
    const task = taskId('cut-drop');
    const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'ask', config, agent: 'pplx' });
    expect(result.ok).toBe(false);
    expect(result.info).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(result.error).toMatch(/perplexity read stream/);
    const info = runInfos(layout.taskDir(PROJECT, task))[0];
    expect(info.usage).toEqual({ input_tokens: 120, output_tokens: 17, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.0013, partial: true });
    expect(readFileSync(join(result.runDir, 'run-info.yaml'), 'utf8')).toContain('    partial: true\n');

    const report = JSON.parse((await runCli(['usage', '--root', tmp.root, '--project', PROJECT, '--task', task, '--json'], { env: cliEnv(home) })).stdout);
    expect(report.tree).toMatchObject({ runs: 1, total_tokens: 137 });
  });

  it('xai: a run stopped while its stream is open keeps the usage already received', async () => {
    const s = await serve(streamThen([chunk('partial answer, '), chunk('more', { prompt_tokens: 300, completion_tokens: 20, cost_in_usd_ticks: 10_000_000 })], 'hold'));
    const config = { agents: { grok: { name: 'grok', type: 'xai', token: 'k', base_url: `${s.url}/v1` } } } as never;
    const task = taskId('cut-stop');
    const controller = new AbortController();
    const job = runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'ask', config, agent: 'grok', signal: controller.signal });
    // the chunk carrying the usage has been read once its text is in the run's stdout
    await waitFor(() => {
      const info = runInfos(layout.taskDir(PROJECT, task))[0];
      return info?.stdout_path && existsSync(info.stdout_path) && readFileSync(info.stdout_path, 'utf8') === 'partial answer, more';
    });
    controller.abort('the test stopped it');
    const result = await job;
    expect(result.ok).toBe(false);
    expect(result.info?.usage).toEqual({ input_tokens: 300, output_tokens: 20, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.001, partial: true });
  });

  it('a run that completes normally is not marked partial', async () => {
    const s = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(chunk('whole answer', { prompt_tokens: 10, completion_tokens: 2 }) + 'data: [DONE]\n\n');
    });
    const config = { agents: { pplx: { name: 'pplx', type: 'perplexity', token: 'k', base_url: `${s.url}/chat/completions` } } } as never;
    const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: taskId('whole'), prompt: 'ask', config, agent: 'pplx' });
    expect(result.ok).toBe(true);
    expect(result.info?.usage).toEqual({ input_tokens: 10, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0 });
  });
});
