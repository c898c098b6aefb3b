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

  it('reads without loading NestJS, nest-commander or the YAML parser, as the Nest path prints it', () => {
    const root = join(dir, 'runs');
    mkdirSync(join(root, 'proj'), { recursive: true });
    const env = cleanEnv(dir);
    expect(runCli(['bus', 'post', '--root', root, '--project', 'proj', '--body', 'one'], { env, cwd: dir }).code).toBe(0);
    expect(runCli(['bus', 'post', '--root', root, '--project', 'proj', '--type', 'FACT', '--body', 'two'], { env, cwd: dir }).code).toBe(0);
    const main = join(repoRoot, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js');
    const probe = `
      require(${JSON.stringify(main)}).main(['bus', 'read', '--root', ${JSON.stringify(root)}, '--project', 'proj', '--tail', '1', '--json'], 'run-agent').then(() => {
        const heavy = Object.keys(require.cache).filter((p) => /node_modules\\/(@nestjs|nest-commander|yaml)\\//.test(p));
        process.stderr.write(JSON.stringify(heavy));
      });`;
    const r = spawnSync(process.execPath, ['-e', probe], { env, cwd: dir, encoding: 'utf8' });
    expect(JSON.parse(r.stderr)).toEqual([]);
    expect(JSON.parse(r.stdout)).toMatchObject({ type: 'FACT', body: 'two', project_id: 'proj' });
    // the same body through nest-commander (--follow stays on the Nest path): identical output
    const text = runCli(['bus', 'read', '--root', root, '--project', 'proj'], { env, cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/\(INFO\) one\n.*\(FACT\) two\n$/s);
    // a usage error falls back to commander, which words it (with its hint)
    const bad = runCli(['bus', 'read', '--root', root, '--project', 'proj', '--tial', '1'], { env, cwd: dir });
    expect([bad.code, bad.stderr]).toEqual([2, "Error: unknown option '--tial' (did you mean --tail?)\n"]);
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
