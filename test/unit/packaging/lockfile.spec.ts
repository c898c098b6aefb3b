// The lock files must match package.json and record every platform's optional binaries, so `npm ci`
// passes on a clean clone on Linux, macOS and Windows (issue #13 item 1).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..', '..');

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
interface Lock {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

const read = <T>(file: string): T => JSON.parse(readFileSync(join(REPO, file), 'utf8')) as T;
const SECTIONS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;

/** Where node's resolution finds `name` from the package at `from` ("" = the root). */
function resolveIn(lock: Lock, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

/** Problems between a package.json and its lock; empty when `npm ci` can install from the lock. */
export function lockProblems(pkg: Record<string, Record<string, string> | undefined>, lock: Lock): string[] {
  const problems: string[] = [];
  if (lock.lockfileVersion < 2) problems.push(`lockfileVersion ${lock.lockfileVersion}: regenerate with npm ≥ 7`);
  const root = lock.packages[''] ?? {};
  for (const section of SECTIONS) {
    const want = pkg[section] ?? {};
    const have = root[section] ?? {};
    for (const [name, spec] of Object.entries(want)) {
      if (have[name] !== spec) problems.push(`${section}.${name}: package.json has ${spec}, the lock has ${have[name] ?? 'nothing'}`);
      else if (/^\d+\.\d+\.\d+/.test(spec) && lock.packages[`node_modules/${name}`]?.version !== spec)
        problems.push(`${name}: pinned ${spec}, the lock installs ${lock.packages[`node_modules/${name}`]?.version ?? 'nothing'}`);
    }
    for (const name of Object.keys(have)) if (!(name in want)) problems.push(`${section}.${name}: in the lock, not in package.json`);
  }
  for (const [path, entry] of Object.entries(lock.packages)) {
    const needed = { ...entry.dependencies, ...entry.optionalDependencies };
    for (const name of Object.keys(needed)) {
      if (!resolveIn(lock, path, name)) problems.push(`${path || '(root)'} needs ${name}, missing from the lock`);
    }
  }
  return problems;
}

describe.each([
  ['root', 'package.json', 'package-lock.json'],
  ['frontend', 'frontend/package.json', 'frontend/package-lock.json'],
])('%s lock file', (_label, pkgFile, lockFile) => {
  const pkg = read<Record<string, Record<string, string>>>(pkgFile);
  const lock = read<Lock>(lockFile);

  it('matches package.json and resolves every dependency, optional platform binaries included', () => {
    expect(lockProblems(pkg, lock)).toEqual([]);
  });

  it('pins every direct dependency exactly', () => {
    const loose = SECTIONS.flatMap((s) => Object.entries(pkg[s] ?? {}).filter(([, spec]) => !/^\d+\.\d+\.\d+$/.test(spec)).map(([n, spec]) => `${n}@${spec}`));
    expect(loose).toEqual([]);
  });
});

describe('lockProblems', () => {
  const lock = read<Lock>('package-lock.json');
  const pkg = read<Record<string, Record<string, string>>>('package.json');

  it('reports a dependency added to package.json but not to the lock', () => {
    const drifted = { ...pkg, dependencies: { ...pkg.dependencies, 'left-pad': '1.3.0' } };
    expect(lockProblems(drifted, lock)).toEqual(['dependencies.left-pad: package.json has 1.3.0, the lock has nothing']);
  });

  it('reports a pin the lock does not install', () => {
    const bumped = { ...pkg, dependencies: { ...pkg.dependencies, yaml: '2.0.0' } };
    expect(lockProblems(bumped, lock)).toContain('dependencies.yaml: package.json has 2.0.0, the lock has 2.9.1');
  });

  it('reports another platform’s optional binary missing from the lock (the @swc/core-darwin-arm64 case)', () => {
    const packages = { ...lock.packages };
    delete packages['node_modules/@swc/core-darwin-arm64'];
    expect(lockProblems(pkg, { ...lock, packages })).toEqual(['node_modules/@swc/core needs @swc/core-darwin-arm64, missing from the lock']);
  });
});

describe('engines of what users install (issue #13 item 2)', () => {
  // the oldest release of each Node line package.json's engines admits
  const SUPPORTED = ['22.13.0', '24.0.0'];

  /**
   * Test-only tools (dev dependencies, never installed by users) that declare a newer Node than
   * ours, with why they may: the MCP Inspector (and what it alone pulls in) is the third-party
   * client the MCP e2e tests drive; its `--cli` mode runs on every supported line.
   */
  const DEV_ONLY_NEWER_NODE = new Set([
    'node_modules/@modelcontextprotocol/inspector',
    'node_modules/@modelcontextprotocol/inspector/node_modules/commander',
    'node_modules/undici',
  ]);

  it('admits every supported Node line in every package a user installs, and in every dev package but the listed test-only tools', () => {
    const semver = require('semver') as { satisfies(v: string, range: string): boolean };
    const lock = read<{ packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }> }>('package-lock.json');
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
      if (!path || !range || (entry.dev && DEV_ONLY_NEWER_NODE.has(path))) continue;
      for (const v of SUPPORTED) if (!semver.satisfies(v, range)) refused.push(`${path} (${range}) refuses Node ${v}`);
    }
    expect(refused).toEqual([]);
  });
});
