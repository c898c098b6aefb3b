/**
 * On a Node older than the supported lines (package.json engines), both CLIs print one line naming
 * the Node they need and exit 2 (bin/node-check.js), before any of the CLI loads; `npm start` runs
 * itself again under a supported Node (scripts/supported-node.js) and stops the same way only when
 * it cannot get one.
 * Runs a real old Node: $CONDUCTOR_TEST_OLD_NODE (.ci/run passes the machine's own when it is older),
 * else this Node when it is itself unsupported, else Node 20 from the npm registry's
 * node-<os>-<arch> package, installed once into the folder .ci/run uses for its Node lines.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cleanEnv, REPO } from './packaging-helpers';

const { supported } = require('../../../bin/node-check') as { supported(version: string): boolean };

function oldNode(): string {
  const given = process.env.CONDUCTOR_TEST_OLD_NODE;
  if (given) return given;
  if (!supported(process.versions.node)) return process.execPath;
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(process.env.TMPDIR || tmpdir(), 'conductor-ci-node-20');
  const bin = join(dir, 'node_modules', pkg, 'bin', 'node');
  if (!existsSync(bin)) {
    const r = spawnSync('npm', ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `${pkg}@20`], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`cannot install ${pkg}@20 for this test (set CONDUCTOR_TEST_OLD_NODE to an old node binary): ${r.stderr}`);
  }
  return bin;
}

describe('an unsupported Node', () => {
  let node: string;
  let version: string;
  let home: string;
  const NEEDS = /needs Node\.js 22\.13\+ or 24\+ \(this is Node\.js v\d+\.\d+\.\d+\)\n$/;
  // the old Node first on PATH, as a user's `node` and `npm start` would find it
  const env = () => cleanEnv(home, { PATH: `${dirname(node)}:${process.env.PATH}` });

  beforeAll(() => {
    node = oldNode();
    version = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    home = mkdtempSync(join(tmpdir(), 'old-node-'));
  }, 300_000);
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('is what the test runs: a Node the engines range refuses', () => {
    const semver = require('semver') as { satisfies(v: string, range: string): boolean };
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(semver.satisfies(version, require('../../../package.json').engines.node)).toBe(false);
  });

  it.each([
    ['run-agent', ['status']],
    ['run-agent', ['--version']],
    ['conductor', []],
    ['conductor', ['--port', '0']],
  ])('%s %j says which Node it needs in one line and exits 2', (bin, args) => {
    const r = spawnSync(node, [join(REPO, 'bin', bin), ...args], { env: env(), encoding: 'utf8' });
    expect(r.stderr).toMatch(new RegExp(`^${bin}: ${NEEDS.source}`));
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(2);
  });

  it('npm start with the download turned off says which Node it needs and exits 2, before installing or building anything', () => {
    const r = spawnSync('npm', ['start', '--silent'], { cwd: REPO, env: { ...env(), CONDUCTOR_NODE_DOWNLOAD: '0' }, encoding: 'utf8' });
    expect(r.stderr).toMatch(new RegExp(`^npm start: ${NEEDS.source}`));
    expect(r.status).toBe(2);
  });

  it('npm start runs itself again under a supported Node (here: the one running jest, as CONDUCTOR_NODE names it)', () => {
    const r = spawnSync('npm', ['start', '--silent', '--', '--version'], { cwd: REPO, env: { ...env(), CONDUCTOR_NODE: process.execPath }, encoding: 'utf8' });
    expect(r.stderr).toContain(`npm start: Node v${version} is older than Node.js 22.13+ or 24+; running under ${process.execPath}\n`);
    expect([r.stdout, r.status]).toEqual([`conductor ${require('../../../package.json').version}\n`, 0]);
  });

  it('npm test runs its chain under a supported Node the same way (scripts/with-supported-node.js), fs-ext loading there', () => {
    const probe = "require('fs-ext'); console.log(process.version)";
    const r = spawnSync(node, [join(REPO, 'scripts', 'with-supported-node.js'), 'node', '-e', probe], { cwd: REPO, env: { ...env(), CONDUCTOR_NODE: process.execPath }, encoding: 'utf8' });
    expect([r.stdout, r.status]).toEqual([`${process.version}\n`, 0]);
    expect(r.stderr).toContain(`with-supported-node: Node v${version} is older than Node.js 22.13+ or 24+`);
    const off = spawnSync(node, [join(REPO, 'scripts', 'with-supported-node.js'), 'node', '-e', probe], { cwd: REPO, env: { ...env(), CONDUCTOR_NODE_DOWNLOAD: '0' }, encoding: 'utf8' });
    expect([off.stderr, off.status]).toEqual([`node: needs Node.js 22.13+ or 24+ (this is Node.js v${version})\n`, 2]);
  });
});
