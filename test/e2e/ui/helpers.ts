// Shared plumbing of the dashboard e2e tests: a real `conductor` server on a temp runs root with
// the scripted command agent (test/fixtures/ui/ui-agent), real Chromium, screenshots, axe-core.
import { ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page, type Response } from 'playwright-core';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';

export const REPO = join(__dirname, '..', '..', '..');
const CONDUCTOR = join(REPO, 'bin', 'conductor');
const AGENT = join(REPO, 'test', 'fixtures', 'ui', 'ui-agent');
export const ARTIFACTS = join(REPO, 'test-artifacts', 'ui');
export const PROJECT = 'ui-e2e';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync('/usr/bin/chromium')) throw new Error('these tests drive /usr/bin/chromium: install it with `apt-get install -y chromium`');
  if (!existsSync(join(REPO, 'frontend', 'dist', 'index.html'))) execSync('npm run build', { cwd: join(REPO, 'frontend'), stdio: 'ignore' });
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

export interface Conductor {
  url: string;
  port: number;
  dir: string;
  root: string;
  proc: ChildProcess;
  output: () => string;
  apiKey?: string;
  /** stopConductor removes `dir` (false when the caller's sandbox owns it). */
  ownsDir: boolean;
}

export interface LaunchOptions {
  root: string;
  config: string;
  /** Working folder of the server (and the folder stopConductor removes when it owns it). */
  dir: string;
  env: NodeJS.ProcessEnv;
  /** 0 (default): any free port, read back from the server's start-up line. */
  port?: number;
  apiKey?: string;
  ownsDir?: boolean;
}

/** Starts `conductor` on 127.0.0.1 for a runs root and config the caller prepared, and waits until it answers. */
export async function launchConductor(o: LaunchOptions): Promise<Conductor> {
  const args = [CONDUCTOR, '--root', o.root, '--port', String(o.port ?? 0), '--host', '127.0.0.1', '--config', o.config];
  if (o.apiKey) args.push('--api-key', o.apiKey);
  const proc = spawn(process.execPath, args, { cwd: o.dir, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  try {
    const port = await waitFor('conductor to announce its port', () => {
      if (proc.exitCode !== null) throw new Error(`conductor exited with ${proc.exitCode}`);
      return announcedPort(output);
    });
    const url = `http://127.0.0.1:${port}`;
    await waitFor('conductor to answer', async () => (await fetch(`${url}/api/v1/health`)).ok);
    return { url, port, dir: o.dir, root: o.root, proc, output: () => output, apiKey: o.apiKey, ownsDir: o.ownsDir ?? true };
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`conductor did not start: ${(err as Error).message}\n${output}`);
  }
}

export interface ConductorOptions {
  apiKey?: string;
  /** The same server coming back: same folder (runs root, config) and port. */
  reuse?: { dir: string; port: number };
  /** Command agents of the config, name → executable (default: `uiagent`, the scripted UI agent). */
  agents?: Record<string, string>;
  /** Writes runs into the fresh runs root before the server starts. */
  seed?: (root: string) => void;
  /** YAML appended to the config after `agents:` (e.g. a `defaults:` section). */
  extraConfig?: string;
  /** More environment of the server (e.g. CONDUCTOR_ALLOWED_HOSTS behind a proxy). */
  env?: NodeJS.ProcessEnv;
}

/** Starts conductor on a fresh temp runs root (or `reuse`d one) with an empty HOME and no key from the environment. */
export async function startConductor(opts: ConductorOptions = {}): Promise<Conductor> {
  const dir = opts.reuse?.dir ?? mkdtempSync(join(tmpdir(), 'ui-e2e-'));
  const root = join(dir, 'runs');
  const home = join(dir, 'home');
  const config = join(dir, 'config.yaml');
  if (!opts.reuse) {
    mkdirSync(root);
    mkdirSync(home);
    const agents = Object.entries(opts.agents ?? { uiagent: AGENT }).map(([name, command]) => `  ${name}:\n    type: command\n    command: ${command}\n`);
    writeFileSync(config, `agents:\n${agents.join('')}${opts.extraConfig ?? ''}`);
    opts.seed?.(root);
  }
  // no generated key unless the test gives one (test/e2e/security covers the printed link)
  const env = { ...process.env, HOME: home, CONDUCTOR_API_KEY: '', CONDUCTOR_NO_AUTH: opts.apiKey ? '' : '1', ...opts.env };
  return launchConductor({ root, config, dir, env, port: opts.reuse?.port, apiKey: opts.apiKey });
}

export async function stopConductor(c: Conductor | undefined): Promise<void> {
  if (!c) return;
  const headers: Record<string, string> = c.apiKey ? { Authorization: `Bearer ${c.apiKey}` } : {};
  // Stop every task still running so no agent outlives the test.
  const dirsIn = (dir: string) => (existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name) : []);
  for (const project of dirsIn(c.root)) {
    for (const task of dirsIn(join(c.root, project)).filter((t) => t.startsWith('task-'))) {
      await fetch(`${c.url}/api/v1/tasks/${task}?project_id=${project}`, { method: 'DELETE', headers }).catch(() => undefined);
    }
  }
  const exited = c.proc.exitCode !== null || c.proc.signalCode !== null ? Promise.resolve() : new Promise((resolve) => c.proc.once('exit', resolve));
  c.proc.kill('SIGTERM');
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(timer);
  if (c.ownsDir) rmSync(c.dir, { recursive: true, force: true });
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

/** Waits until `check` holds (a check that throws counts as "not yet"); fails naming `what`. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  await waitFor(what, check, { timeoutMs, intervalMs: 200 });
}

export async function textOf(loc: Locator): Promise<string> {
  return (await loc.first().innerText()).trim();
}

/** Saves a screenshot (and the server log) when the step fails, to see what the user saw. */
export async function onFailure<T>(page: Page, c: Conductor, name: string, fn: () => Promise<T>): Promise<T> {
  // what the page asked the server and what it answered, for the failure log
  const requests: string[] = [];
  const onResponse = (res: Response): void => {
    const req = res.request();
    if (req.method() !== 'GET') requests.push(`${new Date().toISOString()} ${req.method()} ${res.url()} -> ${res.status()}`);
  };
  page.on('response', onResponse);
  try {
    return await fn();
  } catch (err) {
    await shot(page, `failed-${name}`).catch(() => undefined);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, `failed-${name}-server.log`), `${c.output()}\n===== page requests\n${requests.join('\n')}\n${taskFilesDump(c.root)}`);
    throw err;
  } finally {
    page.off('response', onResponse);
  }
}

/** Every task's bus, markers and run-info under the runs root, for the failure log. */
function taskFilesDump(root: string): string {
  if (!existsSync(root)) return '';
  let out = '';
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, name.name);
      if (name.isDirectory()) walk(path);
      else if (/^(TASK-MESSAGE-BUS\.md|run-info\.yaml|DONE|CANCELLED|STOP-REQUESTED|PAUSED|NEEDS-INPUT\.json)$/.test(name.name)) out += `\n===== ${path}\n${readFileSync(path, 'utf8')}`;
    }
  };
  walk(root);
  return out;
}

export function runRow(page: Page, runId: string): Locator {
  return page.locator(`[role=treeitem][data-key="r:${runId}"]`);
}

/** Opens the Ring UI Select named `label` (inside `scope`) and picks `value` from its popup. */
export async function pickOption(page: Page, scope: Page | Locator, label: string, value: string): Promise<void> {
  await scope.getByRole('combobox', { name: label, exact: true }).click();
  await page.getByRole('row', { name: value, exact: true }).click();
  await eventually(`${label} to show ${value}`, async () => (await textOf(scope.getByRole('combobox', { name: label, exact: true }))) === value);
}

/** The options a Ring UI Select offers (opened and closed again with Escape). */
export async function optionsOf(page: Page, scope: Page | Locator, label: string): Promise<string[]> {
  await scope.getByRole('combobox', { name: label, exact: true }).click();
  const rows = page.getByRole('row');
  await rows.first().waitFor();
  const texts = (await rows.allInnerTexts()).map((t) => t.trim()).filter((t) => t !== '');
  await page.keyboard.press('Escape');
  return texts;
}

export async function createTask(page: Page, prompt: string): Promise<string> {
  await page.getByRole('button', { name: 'New task' }).click();
  const dialog = page.getByRole('dialog', { name: 'New task' });
  await dialog.getByLabel('Project').fill(PROJECT);
  // Issue #12: the agent is chosen from the server's configured agents.
  await eventually('the configured agents', async () => (await textOf(dialog.getByRole('combobox', { name: 'Agent' }))) === 'uiagent');
  expect(await optionsOf(page, dialog, 'Agent')).toEqual(['uiagent']);
  await dialog.getByLabel('Prompt').fill(prompt);
  await dialog.getByRole('button', { name: 'Start task' }).click();
  await dialog.waitFor({ state: 'detached' });
  const taskId = await page.locator('.detail-title .task-id').innerText();
  expect(taskId).toMatch(/^task-\d{8}-\d{6}-[a-z0-9-]+$/);
  return taskId;
}

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** Runs axe-core (root node_modules) in the page; returns the serious and critical violations. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const found = await page.evaluate(async () => {
    const w = globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } };
    return (await w.axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] })).violations;
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}
