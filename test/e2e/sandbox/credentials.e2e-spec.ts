import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '@app/runner';
import { CREDENTIAL_PLACEHOLDER } from '@app/sandbox';
import { loadConfig } from '@app/storage';
import { agentEnv, PROJECT, taskId } from '../runner/helpers';
import { loopParts } from '../../utils/loop-parts';

/* Credentials by proxy: the agent holds a placeholder, the provider stand-in receives the real key. */

// A `claude` on PATH that answers --version, prints its key variable and calls the provider through the proxy.
const FAKE_CLAUDE = `#!/usr/bin/env node
if (process.argv.includes('--version')) { console.log('9.9.9 (Claude Code)'); process.exit(0); }
const http = require('http');
const proxy = new URL(process.env.HTTP_PROXY);
console.log('key ' + process.env.ANTHROPIC_API_KEY);
const req = http.request({ host: proxy.hostname, port: proxy.port, path: process.env.PROVIDER_URL + '/v1/messages', method: 'POST', headers: { 'x-api-key': process.env.ANTHROPIC_API_KEY } }, (res) => {
  let body = '';
  res.on('data', (c) => (body += c));
  res.on('end', () => console.log('provider ' + res.statusCode + ' ' + body.trim()));
});
req.on('error', (e) => console.log('provider error ' + e.code));
req.end('{}');
`;

describe('sandbox credentials by proxy', () => {
  let dir: string;
  let provider: Server;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-cred-'));
    provider = createServer((req, res) => {
      seen.push(req.headers);
      res.end('stand-in ok\n');
    });
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'bin', 'claude'), FAKE_CLAUDE);
    chmodSync(join(dir, 'bin', 'claude'), 0o755);
    mkdirSync(join(dir, 'home'));
    mkdirSync(join(dir, 'worktree'));
    const port = (provider.address() as AddressInfo).port;
    writeFileSync(join(dir, 'config.yaml'), `agents:\n  claude:\n    type: claude\n    token: real-secret-key\n    base_url: http://127.0.0.1:${port}\n    sandbox: bwrap\n`);
  });
  afterAll(async () => {
    await new Promise((r) => provider.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('the agent prints a placeholder; the provider stand-in receives the real key', async () => {
    const port = (provider.address() as AddressInfo).port;
    const result = await runJob({
      ...loopParts,
      root: join(dir, 'runs'),
      projectId: PROJECT,
      taskId: taskId('cred'),
      prompt: 'call the provider',
      agent: 'claude',
      cwd: join(dir, 'worktree'),
      config: loadConfig(join(dir, 'config.yaml')),
      env: { ...agentEnv({ HOME: join(dir, 'home'), PROVIDER_URL: `http://127.0.0.1:${port}` }), PATH: `${join(dir, 'bin')}:${agentEnv().PATH}` },
    });
    const out = readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8');
    expect(out).toContain(`key ${CREDENTIAL_PLACEHOLDER}\n`);
    expect(out).toContain('provider 200 stand-in ok');
    expect(out).not.toContain('real-secret-key');
    expect(seen.map((h) => h['x-api-key'])).toEqual(['real-secret-key']);
  });
});
