import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT, RUN_AGENT, cliEnv, taskId } from './helpers';

/** A real 1 MiB tmpfs (issue #11); mounting needs root (CAP_SYS_ADMIN). */
function mountTmpfs(): { dir: string; release(): void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'bus-enospc-'));
  const res = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8' });
  if (res.status !== 0) {
    rmdirSync(dir);
    return `cannot mount a tmpfs here (${(res.stderr || res.error?.message || 'mount failed').trim()})`;
  }
  return {
    dir,
    release: () => {
      spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const probe = mountTmpfs();
if (typeof probe === 'string') {
  console.warn(`SKIPPED bus ENOSPC test: ${probe}`);
} else probe.release();
const itMounted = typeof probe === 'string' ? it.skip : it;

describe('bus appends are all-or-nothing on a full disk (real 1 MiB tmpfs)', () => {
  itMounted('after ENOSPC and a later successful post, bus read returns exactly the successful messages, intact', () => {
    const fs = mountTmpfs() as { dir: string; release(): void };
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
      expect(failure?.stderr).toMatch(/ENOSPC/);
      expect(failure?.status).toBe(1);
      expect(bodies.length).toBeGreaterThan(5);
      expect(post(bodies[0]).status).toBe(1); // still full: a second failure must leave nothing either
      // free space: grow the tmpfs (remount keeps the contents), then post successfully
      expect(spawnSync('mount', ['-o', 'remount,size=2m', fs.dir]).status).toBe(0);
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
