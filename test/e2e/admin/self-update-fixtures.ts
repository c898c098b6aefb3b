import { execFileSync, spawn, ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..', '..');

/**
 * A private install of the built package (package.json, bin/, dist/; node_modules linked to the
 * repo's), so a self-update can replace it without touching the checkout.
 */
export function makeInstall(dir: string): string {
  const root = path.join(dir, 'conductor-loop');
  fs.mkdirSync(root, { recursive: true });
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(root, 'package.json'));
  fs.cpSync(path.join(REPO, 'bin'), path.join(root, 'bin'), { recursive: true });
  fs.cpSync(path.join(REPO, 'dist', 'apps'), path.join(root, 'dist', 'apps'), { recursive: true, filter: (src) => !src.endsWith('.map') });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'));
  return root;
}

export function installedVersion(root: string): string {
  return JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
}

/** A real agent: waits until $RELEASE_FILE exists, marks its task DONE and exits 0. */
export function writeWaiterAgent(dir: string): string {
  const file = path.join(dir, 'waiter-agent');
  fs.writeFileSync(
    file,
    '#!/bin/sh\ncat >/dev/null\nwhile [ -n "$RELEASE_FILE" ] && [ ! -e "$RELEASE_FILE" ]; do sleep 0.1; done\ntouch "$JRUN_TASK_FOLDER/DONE"\necho done\n',
  );
  fs.chmodSync(file, 0o755);
  return file;
}

export type CandidateServer = 'serves' | 'crashes';

/**
 * An `npm pack`-format tarball (package/…) of a tiny conductor-loop whose bin/conductor is a minimal
 * HTTP server answering /api/v1/health and /api/v1/version on the port it is given — or exits at once.
 */
export function makeCandidateTarball(dir: string, opts: { name?: string; version: string; server: CandidateServer }): string {
  const stage = fs.mkdtempSync(path.join(dir, 'candidate-'));
  const pkg = path.join(stage, 'package');
  fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
  const manifest = { name: opts.name ?? 'conductor-loop', version: opts.version, bin: { 'run-agent': 'bin/run-agent', conductor: 'bin/conductor' } };
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.writeFileSync(path.join(pkg, 'bin', 'run-agent'), `#!/usr/bin/env node\nprocess.stdout.write('run-agent ${opts.version}\\n');\n`);
  const server =
    opts.server === 'crashes'
      ? `#!/usr/bin/env node\nprocess.stderr.write('candidate server: cannot start\\n');\nprocess.exit(3);\n`
      : [
          '#!/usr/bin/env node',
          "const http = require('node:http');",
          'const args = process.argv.slice(2);',
          "const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);",
          "const port = Number(flag('--port') ?? process.env.CONDUCTOR_PORT);",
          'http.createServer((req, res) => {',
          "  res.setHeader('content-type', 'application/json');",
          "  if (req.url === '/api/v1/health') return res.end(JSON.stringify({ status: 'ok' }));",
          `  if (req.url === '/api/v1/version') return res.end(JSON.stringify({ version: '${opts.version}', pid: process.pid, args }));`,
          '  res.statusCode = 404;',
          "  res.end('{}');",
          "}).listen(port, flag('--host') ?? '127.0.0.1');",
          '',
        ].join('\n');
  fs.writeFileSync(path.join(pkg, 'bin', 'conductor'), server);
  for (const b of ['run-agent', 'conductor']) fs.chmodSync(path.join(pkg, 'bin', b), 0o755);
  const tarball = path.join(dir, `${path.basename(stage)}.tgz`);
  execFileSync('tar', ['-czf', tarball, '-C', stage, 'package']);
  return tarball;
}

export interface HttpAnswer {
  status: number;
  body: any;
}

export function request(base: string, method: string, url: string, body?: unknown): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(`${base}${url}`, { method, headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: text });
        }
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export { waitFor } from '../../utils/wait';

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export function startServer(install: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, [path.join(install, 'bin', 'conductor'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  return { child, output: () => output };
}

/** Ends a process by pid (and its group when it leads one); missing processes are fine. */
export function killPid(pid: number | undefined): void {
  if (!pid) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // not there
    }
  }
}
