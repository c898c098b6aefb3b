import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { itWithTmpfs, mountTmpfs, type Tmpfs } from '../../utils/tmpfs';
import { PROJECT, RUN_AGENT, cliEnv, taskId } from './helpers';

const itMounted = itWithTmpfs('bus ENOSPC test');

describe('bus appends are all-or-nothing on a full disk (real 1 MiB tmpfs)', () => {
  itMounted('after ENOSPC and a later successful post, bus read returns exactly the successful messages, intact', () => {
    const fs = mountTmpfs('1m', 'bus-enospc-') as Tmpfs;
    const home = mkdtempSync(join(tmpdir(), 'bus-enospc-home-'));
    try {
      const root = join(fs.dir, 'runs');
      const task = taskId('enospc');
      mkdirSync(join(root, PROJECT, task), { recursive: true });
      const env = cliEnv(home);
      const post = (body: string) =>
        spawnSync(RUN_AGENT, ['bus', 'post', '--root', root, '--project', PROJECT, '--task', task, '--type', 'INFO'], { input: body, env, encoding: 'utf8' });
      const bodies: string[] = [];
      let failure: ReturnType<typeof post> | undefined;
      for (let i = 0; i < 40 && !failure; i++) {
        const body = `message ${i} ` + String.fromCharCode(97 + (i % 26)).repeat(60_000);
        const res = post(body);
        if (res.status === 0) bodies.push(body);
        else failure = res;
      }
      // one clear line (issue #29), the errno kept for the curious
      expect(failure?.stderr).toMatch(/^Error: write message bus "[^"\n]+": no space left on the device that holds the runs root \(disk full or quota exceeded\) \(ENOSPC\)\n$/);
      expect(failure?.status).toBe(1);
      expect(bodies.length).toBeGreaterThan(5);
      expect(post(bodies[0]).status).toBe(1); // still full: a second failure must leave nothing either
      // free space: grow the tmpfs (remount keeps the contents), then post successfully
      fs.resize('2m');
      const last = 'after the disk was freed';
      const ok = post(last);
      expect(ok.stderr).toBe('');
      expect(ok.status).toBe(0);
      bodies.push(last);

      const read = spawnSync(RUN_AGENT, ['bus', 'read', '--root', root, '--project', PROJECT, '--task', task, '--tail', '0', '--json'], { env, encoding: 'utf8' });
      expect(read.status).toBe(0);
      const msgs = read.stdout.trim().split('\n').map((l) => JSON.parse(l) as { body: string });
      expect(msgs.map((m) => m.body.replace(/\n$/, ''))).toEqual(bodies);
    } finally {
      fs.release();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
