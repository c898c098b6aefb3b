/**
 * HTTP triggers on a real server with the API key on (docs/triggers.md): the trigger's own token
 * (made by `run-agent trigger token`, stored hashed) is the only credential the route takes; the
 * idempotency key makes a repeat return the same task; the rate limit answers 429.
 * Needs `npm run build` (bin/conductor, bin/run-agent).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getJson, RUN_AGENT, runCli, RunningServer, serverEnv, startConductor, writeConfig, writeFakeAgent } from '../server/helpers';

const API_KEY = 'server-key-for-the-rest-of-the-api';
const FIXED_TOKEN = 'fixed-token-of-the-limited-trigger';

describe('HTTP triggers', () => {
  let dir: string;
  let root: string;
  let config: string;
  let server: RunningServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'trg-e2e-'));
    root = join(dir, 'runs');
    const hash = createHash('sha256').update(FIXED_TOKEN).digest('hex');
    const extra = [
      'triggers:',
      '  deploy:',
      '    task:',
      '      project: hooks',
      '      prompt: "Deploy {{payload.ref}} for {{payload.user.name}}"',
      '  limited:',
      `    token_sha256: ${hash}`,
      '    rate_per_minute: 1',
      '    max_payload_bytes: 100',
      '    task:',
      '      project: hooks',
      '      prompt: limited {{payload}}',
      '  broken:',
      `    token_sha256: ${hash}`,
      '    task:',
      '      project: hooks',
      '      prompt: never starts',
      '      agent: no-such-agent',
      '',
    ].join('\n');
    config = writeConfig(dir, writeFakeAgent(dir), extra);
    server = await startConductor(dir, root, config, { CONDUCTOR_API_KEY: API_KEY, CONDUCTOR_NO_AUTH: '' });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (name: string, token: string | undefined, payload: unknown, key?: string) =>
    getJson(`${server.url}/api/v1/triggers/${name}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(key ? { 'Idempotency-Key': key } : {}) },
      body: JSON.stringify(payload),
    });

  const newToken = async (): Promise<string> => {
    const res = await runCli(RUN_AGENT, ['trigger', 'token', 'deploy', '--config', config, '--root', root], serverEnv(dir));
    expect(res.code).toBe(0);
    return res.stdout.trim();
  };

  it('refuses a missing, wrong or server-API-key token with 401 and starts nothing', async () => {
    await newToken();
    for (const token of [undefined, 'wrong', API_KEY]) {
      const res = await call('deploy', token, { ref: 'main' });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
    expect((await call('no-such-trigger', 'wrong', {})).status).toBe(401);
    expect(readdirSync(root).includes('hooks')).toBe(false);
    // every other route still needs the API key (deny by default)
    expect((await getJson(`${server.url}/api/v1/tasks`)).status).toBe(401);
    expect((await getJson(`${server.url}/api/v1/schedules`)).status).toBe(401);
  });

  it('the same idempotency key twice starts one task and returns its id; the payload is in the prompt', async () => {
    const token = await newToken();
    const first = await call('deploy', token, { ref: 'v1.2', user: { name: 'ada' } }, 'delivery-42');
    expect(first.status).toBe(201);
    expect(first.body.replayed).toBe(false);
    const again = await call('deploy', token, { ref: 'v9.9' }, 'delivery-42');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ task_id: first.body.task_id, replayed: true });
    const tasks = readdirSync(join(root, 'hooks')).filter((t) => t.startsWith('task-'));
    expect(tasks).toEqual([first.body.task_id]);
    expect(readFileSync(join(root, 'hooks', first.body.task_id, 'TASK.md'), 'utf8')).toBe('Deploy v1.2 for ada\n');
    // another key starts another task
    const other = await call('deploy', token, { ref: 'v2' }, 'delivery-43');
    expect(other.status).toBe(201);
    expect(other.body.task_id).not.toBe(first.body.task_id);
  });

  it('a refused start does not keep the idempotency key: a retry is refused again, not replayed', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await call('broken', FIXED_TOKEN, {}, 'retry-me');
      expect(res.status).toBe(422);
    }
  });

  it('a new token replaces the old one at once (rotation)', async () => {
    const old = await newToken();
    const fresh = await newToken();
    expect((await call('deploy', old, { ref: 'x' })).status).toBe(401);
    expect((await call('deploy', fresh, { ref: 'x' })).status).toBe(201);
  });

  it('limits the rate and the payload size per trigger', async () => {
    expect((await call('limited', FIXED_TOKEN, { big: 'x'.repeat(200) })).status).toBe(413);
    expect((await call('limited', FIXED_TOKEN, { n: 1 })).status).toBe(201);
    const limited = await call('limited', FIXED_TOKEN, { n: 2 });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('TOO_MANY_REQUESTS');
  });

  it('`run-agent trigger token` refuses a trigger the config does not define (exit 2, nothing written)', async () => {
    const res = await runCli(RUN_AGENT, ['trigger', 'token', 'nope', '--config', config, '--root', root], serverEnv(dir));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/trigger "nope" is not in the config/);
    expect(readdirSync(join(root, '.triggers', 'triggers'))).not.toContain('nope');
  });
});
