// The message bus panel after its stream could not resume (real conductor, real Chromium): the
// browser lost the network, the project bus was rotated meanwhile, and the browser's reconnect
// names a message the server no longer has. The server then sends `resync` and only the last 20 messages;
// the panel must re-list the bus and show all of it, without the messages that are gone.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { BusWriter } from '@app/messagebus';
import { RunsLayout, writeRunInfo } from '@app/storage';
import { type Conductor, launchBrowser, onFailure, PROJECT, shot, startConductor, stopConductor } from './helpers';

jest.setTimeout(180_000);

const TASK = 'task-20260101-000000-resync-seed';

/** A 127.0.0.1 TCP proxy to the server: cutAndHold() drops every connection and holds new ones until release(). */
async function tcpProxy(port: number) {
  const sockets = new Set<Socket>();
  let held: (() => void)[] | undefined;
  const server = createServer((client) => {
    const pipe = () => {
      const upstream = connect(port, '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    };
    if (held) held.push(pipe);
    else pipe();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cutAndHold(): void {
      held = [];
      for (const s of sockets) s.destroy();
    },
    release(): void {
      const waiting = held ?? [];
      held = undefined;
      for (const p of waiting) p();
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

async function post(bus: string, bodies: string[]): Promise<void> {
  const writer = new BusWriter(bus);
  for (const body of bodies) await writer.append({ type: 'INFO', project_id: PROJECT, task_id: '', run_id: '', body });
}

describe('dashboard: the bus panel re-lists after a resync', () => {
  let browser: Browser;
  let server: Conductor | undefined;
  let page: Page;
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;

  beforeAll(async () => {
    browser = await launchBrowser();
    server = await startConductor({
      // the browser reaches it through a TCP proxy on another port: name 127.0.0.1 on any port (Host allow-list)
      env: { CONDUCTOR_ALLOWED_HOSTS: '127.0.0.1' },
      seed: (root) => {
        // one finished run makes the project known to the server
        const runDir = join(root, PROJECT, TASK, 'runs', 'run-1');
        mkdirSync(runDir, { recursive: true });
        writeFileSync(join(root, PROJECT, TASK, 'TASK.md'), 'seed\n');
        const t = new Date('2026-01-01T00:00:00Z');
        writeRunInfo(join(runDir, 'run-info.yaml'), { version: 1, run_id: 'run-1', project_id: PROJECT, task_id: TASK, agent: 'uiagent', pid: 1, pgid: 1, start_time: t, end_time: t, exit_code: 0, status: 'completed', agent_version: '' });
      },
    });
    await post(new RunsLayout(server.root).projectBus(PROJECT), ['old message 1', 'old message 2', 'old message 3']);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await stopConductor(server);
    await proxy?.close();
  });

  it('shows the rotated bus whole, and none of the messages that are gone', () => onFailure(page, server!, 'bus-resync', async () => {
    const c = server!;
    proxy = await tcpProxy(c.port);
    await page.goto(`${proxy.url}/ui/?project=${PROJECT}`);
    const log = page.getByRole('region', { name: 'Message bus' }).getByRole('log');
    await log.getByText('old message 3').waitFor({ timeout: 30_000 });
    await page.getByRole('region', { name: 'Message bus' }).locator('.bus-header').getByText('● live').waitFor({ timeout: 30_000 });

    // the browser's connections drop (the server stays up) and its reconnects wait while the bus is rotated:
    // the old file moved away, a new bus of 25 messages (more than the 20 a resync replays)
    proxy.cutAndHold();
    const bus = new RunsLayout(c.root).projectBus(PROJECT);
    renameSync(bus, `${bus}.1`);
    await post(bus, Array.from({ length: 25 }, (_, i) => `new message ${String(i + 1).padStart(2, '0')}`));
    proxy.release();
    await log.getByText('new message 25').waitFor({ timeout: 60_000 });
    // the first messages of the new bus come only from the re-list; the old ones are gone
    await log.getByText('new message 01').waitFor({ timeout: 30_000 });
    await log.getByText('old message 1').waitFor({ state: 'detached', timeout: 30_000 });
    expect(await log.locator('article.msg').count()).toBe(25);
    await shot(page, 'bus-resync');
  }));
});
