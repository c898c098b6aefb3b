import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runJob } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { busTypesAndBodies, PROJECT, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

function chunk(content: string): string {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
}

describe('a REST agent (xai) through the same job path', () => {
  const tmp = tempRoot();
  let server: Server;
  let url = '';
  const prompts: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        prompts.push(JSON.parse(body).messages[0].content);
        if (req.headers.authorization !== 'Bearer test-key') {
          res.statusCode = 401;
          res.end('{"error":"bad key"}');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(chunk('Hello') + chunk(' from Grok.') + 'data: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => {
    server.close();
    tmp.cleanup();
  });

  it('writes output.md, run-info (pid = the runner) and RUN_START/RUN_STOP; the prompt is prompt.md', async () => {
    const config = { agents: { grok: { name: 'grok', type: 'xai', token: 'test-key', base_url: url } } } as never;
    const task = taskId('xai');
    const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'ask grok', config });
    expect(result.error).toBeUndefined();
    expect(readFileSync(join(result.runDir, 'output.md'), 'utf8')).toBe('Hello from Grok.');
    expect(result.info).toMatchObject({ agent: 'xai', status: 'completed', exit_code: 0, pid: process.pid, agent_version: '' });
    expect(prompts.at(-1)).toBe(readFileSync(join(result.runDir, 'prompt.md'), 'utf8'));
    expect(busTypesAndBodies(new RunsLayout(tmp.root).taskBus(PROJECT, task)).map((l) => l.split(' ')[0])).toEqual(['RUN_START', 'RUN_STOP']);
  });

  it('an auth failure is a failed run with exit code 1 and is fatal for the loop (D1)', async () => {
    const config = { agents: { grok: { name: 'grok', type: 'xai', token: 'wrong', base_url: url } } } as never;
    const task = taskId('xai401');
    const result = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'ask grok', config });
    expect(result.ok).toBe(false);
    expect(result.fatal).toBe(true);
    expect(result.info).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(result.info!.error_summary!.length).toBeLessThanOrEqual(200);
    expect(busTypesAndBodies(new RunsLayout(tmp.root).taskBus(PROJECT, task))[1]).toBe('RUN_CRASH run stopped with code 1');
  });
});
