import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
});
