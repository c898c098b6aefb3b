import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareMessage } from '@app/messagebus';
import { PROJECT, RUN_AGENT, cliEnv, taskId } from './helpers';

// Spawns the built CLI: build first (`npx nest build cli`).
describe('run-agent bus repair (issue #11)', () => {
  it('reports a record lacking its terminator, removes an unfinished final record, and bus read shows only complete ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bus-repair-'));
    try {
      const root = join(dir, 'runs');
      const task = taskId('repair');
      mkdirSync(join(root, PROJECT, task), { recursive: true });
      const bus = join(root, PROJECT, task, 'TASK-MESSAGE-BUS.md');
      const base = { type: 'INFO', project_id: PROJECT, task_id: task, run_id: '' };
      const e1 = prepareMessage({ ...base, body: 'one' });
      const torn = prepareMessage({ ...base, body: 'torn and completed by an old writer' }).entry;
      const e2 = prepareMessage({ ...base, body: 'two' });
      const tail = prepareMessage({ ...base, body: 'cut short' }).entry;
      const cutTail = tail.slice(0, tail.indexOf('cut') + 3);
      writeFileSync(bus, `${e1.entry}\n${torn.slice(0, torn.indexOf('completed'))}\n${e2.entry}\n${cutTail}`);
      const env = cliEnv(dir);
      const scope = ['--root', root, '--project', PROJECT, '--task', task];

      const repair = spawnSync(process.execPath, [RUN_AGENT, 'bus', 'repair', ...scope], { env, encoding: 'utf8' });
      expect({ code: repair.status, stderr: repair.stderr }).toEqual({ code: 0, stderr: '' });
      expect(repair.stdout).toBe(
        `${bus}: 1 record(s) lacking their terminator (skipped by readers)\nremoved an unfinished final record (${cutTail.length + 1} bytes)\n`,
      );
      expect(readFileSync(bus, 'utf8').endsWith(e2.entry)).toBe(true);

      const read = spawnSync(process.execPath, [RUN_AGENT, 'bus', 'read', ...scope, '--tail', '0', '--json'], { env, encoding: 'utf8' });
      expect(read.status).toBe(0);
      const msgs = read.stdout.trim().split('\n').map((l) => JSON.parse(l) as { msg_id: string; body: string });
      expect(msgs.map((m) => [m.msg_id, m.body])).toEqual([
        [e1.msg.msg_id, 'one'],
        [e2.msg.msg_id, 'two'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('foreign bytes after an acknowledged post: bus read keeps it, the next post appends (no truncation) and names the quarantine file, bus repair quarantines (issue #31)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bus-foreign-'));
    try {
      const root = join(dir, 'runs');
      const task = taskId('foreign');
      mkdirSync(join(root, PROJECT, task), { recursive: true });
      const bus = join(root, PROJECT, task, 'TASK-MESSAGE-BUS.md');
      const env = cliEnv(dir);
      const scope = ['--root', root, '--project', PROJECT, '--task', task];
      const cli = (...args: string[]) => spawnSync(process.execPath, [RUN_AGENT, ...args], { env, encoding: 'utf8' });
      const read = () => cli('bus', 'read', ...scope, '--tail', '0', '--json').stdout.trim().split('\n').map((l) => JSON.parse(l) as { msg_id: string; type: string; body: string });

      const first = cli('bus', 'post', ...scope, '--body', 'acknowledged');
      expect(first.status).toBe(0);
      const ackId = /msg_id: (\S+)/.exec(first.stdout)![1];
      appendFileSync(bus, Buffer.from([0x00, 0xff, 0x13, 0x37]));
      const before = readFileSync(bus);
      expect(read().map((m) => [m.msg_id, m.body])).toEqual([[ackId, 'acknowledged']]);

      expect(cli('bus', 'post', ...scope, '--body', 'next').status).toBe(0);
      expect(readFileSync(bus).subarray(0, before.length).equals(before)).toBe(true);
      const [quarantine] = readdirSync(join(root, PROJECT, task)).filter((f) => f.startsWith('TASK-MESSAGE-BUS.md.quarantine-'));
      expect(readFileSync(join(root, PROJECT, task, quarantine))).toEqual(Buffer.from([0x00, 0xff, 0x13, 0x37]));
      const msgs = read();
      expect(msgs.map((m) => m.type)).toEqual(['INFO', 'ERROR', 'INFO']);
      expect(msgs[0]).toMatchObject({ msg_id: ackId, body: 'acknowledged' });
      expect(msgs[1].body).toContain(quarantine);
      expect(msgs[2].body).toBe('next');

      appendFileSync(bus, Buffer.from([0xfe]));
      const repair = cli('bus', 'repair', ...scope);
      expect(repair.status).toBe(0);
      expect(repair.stdout).toContain('quarantined 1 unreadable byte(s) at the end to ');
      expect(read().map((m) => m.type)).toEqual(['INFO', 'ERROR', 'INFO', 'ERROR']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
