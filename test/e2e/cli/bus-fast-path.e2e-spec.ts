import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BUS_POST_FLAGS, BUS_READ_FLAGS } from '../../../apps/cli/src/commands/bus/bus-flags';
import { tempDir } from '../../unit/messagebus/tmp';
import { cleanEnv, repoRoot, requireBuild, runCli } from './bus-helpers';

describe('bus post fast path', () => {
  let dir: string;
  let cleanup: () => void;
  beforeAll(() => requireBuild());
  beforeEach(() => ({ dir, cleanup } = tempDir('bus-fast-')));
  afterEach(() => cleanup());

  it('posts without loading NestJS, nest-commander or the YAML parser', () => {
    const root = join(dir, 'runs');
    mkdirSync(join(root, 'proj'), { recursive: true });
    const main = join(repoRoot, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js');
    const probe = `
      require(${JSON.stringify(main)}).main(['bus', 'post', '--root', ${JSON.stringify(root)}, '--project', 'proj', '--body', 'fast'], 'run-agent').then(() => {
        const heavy = Object.keys(require.cache).filter((p) => /node_modules\\/(@nestjs|nest-commander|yaml)\\//.test(p));
        process.stderr.write(JSON.stringify(heavy));
      });`;
    const r = spawnSync(process.execPath, ['-e', probe], { env: cleanEnv(dir), cwd: dir, encoding: 'utf8' });
    expect(r.stdout).toMatch(/^msg_id: MSG-/);
    expect(JSON.parse(r.stderr)).toEqual([]);
  });

  it('serves --help through NestJS with the same flag definitions', () => {
    const env = cleanEnv(dir);
    const post = runCli(['bus', 'post', '--help'], { env, cwd: dir });
    expect(post.code).toBe(0);
    for (const spec of Object.values(BUS_POST_FLAGS)) expect(post.stdout).toContain(spec.flags);
    const read = runCli(['bus', 'read', '--help'], { env, cwd: dir });
    for (const spec of Object.values(BUS_READ_FLAGS)) expect(read.stdout).toContain(spec.flags);
  });
});
