import { ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CONDUCTOR, REPO_ROOT, RUN_AGENT, runCli as runSharedCli, type CliResult } from '../../utils/cli';

export const REPO = REPO_ROOT;
export { CONDUCTOR, RUN_AGENT };

export type { CliResult } from '../../utils/cli';
export { waitFor } from '../../utils/wait';

/** Runs a bin/ executable to completion (stdin closed unless `input`); `env` is added to this process's. */
export function runCli(bin: string, args: string[], env: NodeJS.ProcessEnv = {}, opts: { cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return runSharedCli(args, { ...opts, bin, env: { ...process.env, ...env } });
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** A scripted HTTP server on 127.0.0.1 standing in for the conductor API. */
export class FakeApi {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, Handler>();
  private server?: Server;
  url = '';

  on(method: string, path: string, handler: Handler): this {
    this.routes.set(`${method} ${path}`, handler);
    return this;
  }

  json(method: string, path: string, status: number, body: unknown): this {
    return this.on(method, path, (_req, res) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const rec = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        this.requests.push(rec);
        const handler = this.routes.get(`${rec.method} ${rec.url}`) ?? this.routes.get(`${rec.method} ${rec.url.split('?')[0]}`);
        if (!handler) {
          res.writeHead(404, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'NOT_FOUND', message: `no route ${rec.method} ${rec.url}` } }));
          return;
        }
        void handler(rec, res);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

export function sseHeaders(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
}

export interface RunningServer {
  child: ChildProcess;
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  stdout: () => string;
  stderr: () => string;
  /** Sends the signal and resolves with the exit code (kills and fails after 15 s). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts bin/conductor (or bin/run-agent serve) and waits until it printed its URLs. */
export function startServer(bin: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<RunningServer> {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in time\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, 30_000);
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdout!.on('data', (d) => {
      stdout += d;
      // `Runs root:` is the last start-up line, after the URLs
      const m = /API listening on http:\/\/[^:/]+:(\d+)\/\n[^]*Runs root: .*\n/.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      const port = Number(m[1]);
      resolve({
        child,
        port,
        url: `http://127.0.0.1:${port}`,
        stdout: () => stdout,
        stderr: () => stderr,
        stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
          const code = await exited;
          clearTimeout(kill);
          return code;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    });
  });
}

/**
 * A server's environment: HOME in `dir`, none of the caller's CONDUCTOR_* settings, and no generated
 * key (`CONDUCTOR_NO_AUTH=1`: these tests are not about auth; test/e2e/security covers the default), plus `extra`.
 */
export function serverEnv(dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    HOME: dir,
    CONDUCTOR_ROOT: '',
    CONDUCTOR_CONFIG: '',
    CONDUCTOR_PORT: '',
    CONDUCTOR_HOST: '',
    CONDUCTOR_API_KEY: '',
    CONDUCTOR_URL: '',
    CONDUCTOR_DISABLE_TASK_START: '',
    CONDUCTOR_STATE_DIR: '',
    CONDUCTOR_ALLOWED_HOSTS: '',
    CONDUCTOR_ALLOW_ANY_HOST: '',
    CONDUCTOR_NO_AUTH: '1',
    ...extra,
  };
}

/** bin/conductor on 127.0.0.1 (a free port) for `root` and `config`, run in `dir` with {@link serverEnv}. */
export function startConductor(dir: string, root: string, config: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  return startServer(CONDUCTOR, ['--host', '127.0.0.1', '--port', '0', '--root', root, '--config', config], serverEnv(dir, extraEnv), dir);
}

export async function getJson<T = any>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export async function postJson<T = any>(url: string, payload: unknown): Promise<{ status: number; body: T }> {
  return getJson<T>(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) });
}

/**
 * Writes an executable fake agent: reads the prompt from stdin, prints two lines, waits for
 * $RELEASE_FILE when that variable is set, then marks the task DONE so the loop ends.
 */
export function writeFakeAgent(dir: string): string {
  const path = join(dir, 'fake-agent.sh');
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      'cat > /dev/null',
      'echo "hello from fake agent"',
      'echo "task $JRUN_TASK_ID"',
      'if [ -n "$RELEASE_FILE" ]; then while [ ! -f "$RELEASE_FILE" ]; do sleep 0.05; done; fi',
      'touch "$JRUN_TASK_FOLDER/DONE"',
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return path;
}

/** A config.yaml with the fake agent registered as agent "fake" (type command, D17). */
export function writeConfig(dir: string, agentPath: string, extra = ''): string {
  const path = join(dir, 'config.yaml');
  writeFileSync(path, `agents:\n  fake:\n    type: command\n    command: ${agentPath}\ndefaults:\n  agent: fake\n  timeout: 300\n${extra}`);
  return path;
}
