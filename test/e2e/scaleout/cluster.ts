import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseBus } from '@app/messagebus';
import { envWithFakeAgents } from '../../utils/fake-agents';
import { NatsServerProcess } from '../../utils/nats-server';
import { waitFor as waitForEvent } from '../../utils/wait';

const REPO = join(__dirname, '..', '..', '..');
/** The suite's {@link waitForEvent}, polling every 100 ms: these probes read whole replicas. */
export function waitFor<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 30_000): Promise<T> {
  return waitForEvent(what, probe, { timeoutMs, intervalMs: 100 });
}

export interface Proc {
  child: ChildProcess;
  out: string;
  root: string;
  host: string;
}

function startProc(bin: string, args: string[], env: Record<string, string>, root: string, host: string): Proc {
  const child = spawn(process.execPath, [join(REPO, 'bin', bin), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = { child, out: '', root, host };
  child.stdout!.on('data', (d) => (p.out += d));
  child.stderr!.on('data', (d) => (p.out += d));
  return p;
}

/** nats-server + `conductor --nats` + workers, each a separate process with its own runs root. */
export class Cluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'scaleout-'));
  readonly nats: NatsServerProcess;
  server!: Proc;
  serverUrl = '';
  workers: Proc[] = [];

  /** `natsArgs` go to nats-server, `clientArgs` (credentials) to the server and every worker. */
  constructor(private readonly opts: { natsArgs?: string[]; clientArgs?: string[] } = {}) {
    this.nats = new NatsServerProcess(opts.natsArgs);
  }

  private get clientArgs(): string[] {
    return this.opts.clientArgs ?? [];
  }

  /** `server: false` leaves the server for startServer() (a server that starts late). */
  async start(workers: number, opts: { server?: boolean } = {}): Promise<void> {
    if (!this.nats.url) await this.nats.start();
    if (opts.server !== false) this.launchServer();
    for (let i = 1; i <= workers; i++) this.startWorker(`w${i}`);
    if (opts.server !== false) await this.serverListening();
    for (const w of this.workers) await waitFor(`worker ${w.host} to pull`, () => w.out.includes('pulling from'), 30_000);
  }

  async startServer(): Promise<void> {
    this.launchServer();
    await this.serverListening();
  }

  private launchServer(): void {
    const root = join(this.dir, 'server');
    this.server = startProc('conductor', ['--root', root, '--port', '0', '--nats', this.nats.url, '--watchdog-interval', '0', '--no-auth', ...this.clientArgs], this.env({}), root, 'server');
  }

  private async serverListening(): Promise<void> {
    const m = await waitFor('the server to listen', () => /API listening on (http:\/\/\S+?)\/?\n/.exec(this.server.out), 30_000);
    this.serverUrl = m[1].replace(/\/$/, '');
  }

  startWorker(host: string): Proc {
    const root = join(this.dir, host);
    const args = ['worker', '--nats', this.nats.url, '--root', root, '--host', host, '--capacity', '4', '--lease', '3s', '--restart-delay', '100ms', ...this.clientArgs];
    const w = startProc('run-agent', args, this.env({ FAKE_AGENT_DONE: '1' }), root, host);
    this.workers.push(w);
    return w;
  }

  /** Fake agents on PATH and a home of the cluster's own: a config in the user's home (~/.run-agent) must not change what the tests see. */
  private env(extra: Record<string, string>): Record<string, string> {
    return envWithFakeAgents({ NODE_ENV: 'test', HOME: this.dir, ...extra });
  }

  async submit(projectId: string, taskId: string, env: Record<string, string> = {}): Promise<{ run_id: string }> {
    const res = await fetch(`${this.serverUrl}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: projectId, task_id: taskId, agent_type: 'codex', prompt: `work on ${taskId}\n`, config: env }),
    });
    const body = (await res.json()) as { run_id: string };
    if (res.status !== 201 && res.status !== 200) throw new Error(`submit ${taskId}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  }

  async dispose(): Promise<void> {
    // SCALEOUT_DEBUG=1: every process's output, to read why a scale-out test failed
    if (process.env.SCALEOUT_DEBUG) for (const pr of [this.server, ...this.workers].filter(Boolean)) console.log(`--- ${pr.host}\n${pr.out}`);
    const all = [this.server, ...this.workers].filter((p) => p && p.child.exitCode === null && p.child.signalCode === null);
    await Promise.all(
      all.map(
        (p) =>
          new Promise<void>((resolve) => {
            p.child.once('exit', () => resolve());
            p.child.kill('SIGKILL');
          }),
      ),
    );
    await this.nats.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A cluster of `workers` workers for the file's tests: started before them, disposed after. */
export function clusterForFile(workers: number): Cluster {
  const c = new Cluster();
  jest.setTimeout(120_000);
  beforeAll(() => c.start(workers));
  afterAll(() => c.dispose());
  return c;
}

/** Every replicated file of a project under `root` (locks and temp files are host-local). */
export function projectFiles(root: string, projectId: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const base = join(root, projectId);
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (/(\.lock$|\.tmp$)/.test(name)) continue;
      if (lstatSync(full).isDirectory()) walk(full);
      else if (name !== 'PROJECT-MESSAGE-BUS.md') out.set(relative(root, full), readFileSync(full));
    }
  };
  walk(base);
  return out;
}

/** Files of `worker` missing from or different in `replica` (empty when byte-identical). */
export function replicaDiff(worker: string, replica: string, projectId: string): string[] {
  const diff: string[] = [];
  for (const [rel, data] of projectFiles(worker, projectId)) {
    const file = join(replica, rel);
    if (!existsSync(file)) diff.push(`missing ${rel}`);
    else if (!readFileSync(file).equals(data)) diff.push(`differs ${rel}`);
  }
  return diff;
}

export function tasksIn(root: string, projectId: string): string[] {
  const dir = join(root, projectId);
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('task-')) : [];
}

/** DONE, and the completion facts reached the project bus (the loop ended). */
export function taskDone(root: string, p: string, t: string): boolean {
  const bus = join(root, p, t, 'TASK-MESSAGE-BUS.md');
  return existsSync(join(root, p, t, 'DONE')) && existsSync(bus) && /completion facts (already )?propagated/.test(readFileSync(bus, 'utf8'));
}

/** The workers holding a copy of the task (the one that ran it, and any that took it over). */
export function ownersOf(c: Cluster, p: string, t: string): string[] {
  return c.workers.filter((w) => existsSync(join(w.root, p, t, 'TASK.md'))).map((w) => w.host);
}

export function projectBusIds(root: string, p: string): string[] {
  const f = join(root, p, 'PROJECT-MESSAGE-BUS.md');
  return existsSync(f) ? parseBus(readFileSync(f)).map((m) => m.msg_id) : [];
}

/** How many completion facts of the task the project bus holds (one per completed loop). */
export function completionFacts(root: string, p: string, t: string): number {
  const f = join(root, p, 'PROJECT-MESSAGE-BUS.md');
  return existsSync(f) ? parseBus(readFileSync(f)).filter((m) => m.type === 'FACT' && m.task_id === t).length : 0;
}
