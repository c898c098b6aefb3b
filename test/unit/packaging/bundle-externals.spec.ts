// A module a bundle leaves out is loaded by Node's require from the bundle's folder: the build
// fails when that would find another copy than the one the requiring file resolves
// (scripts/bundle-cli.js, assertSameCopy).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { assertSameCopy } = require('../../../scripts/bundle-cli.js') as { assertSameCopy: (request: string, context: string, bundleDir: string) => void };

describe('bundle externals', () => {
  let dir: string;
  const pkg = (at: string, version: string) => {
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, 'package.json'), JSON.stringify({ name: 'pkg', version, main: 'index.js' }));
    writeFileSync(join(at, 'index.js'), `module.exports = ${JSON.stringify(version)};`);
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bundle-externals-'));
    pkg(join(dir, 'node_modules', 'pkg'), '1.0.0');
    pkg(join(dir, 'node_modules', 'user', 'node_modules', 'pkg'), '2.0.0');
    mkdirSync(join(dir, 'dist', 'bundle'), { recursive: true });
    mkdirSync(join(dir, 'src'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes when the bundle would load the copy the requiring file resolves', () => {
    expect(() => assertSameCopy('pkg', join(dir, 'src'), join(dir, 'dist', 'bundle'))).not.toThrow();
  });

  it('fails the build when the requiring file has a nested copy of its own', () => {
    expect(() => assertSameCopy('pkg', join(dir, 'node_modules', 'user'), join(dir, 'dist', 'bundle'))).toThrow(
      /^pkg, required from .*node_modules\/user, resolves to another copy from .*dist\/bundle; bundle it instead$/,
    );
  });

  it('leaves an optional package that is not installed to the code that requires it', () => {
    expect(() => assertSameCopy('not-installed', join(dir, 'src'), join(dir, 'dist', 'bundle'))).not.toThrow();
  });
});
