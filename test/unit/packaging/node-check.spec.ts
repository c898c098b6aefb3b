// bin/node-check.js: the supported Node lines, the same as package.json's engines range (which
// npm reads); the bins and `npm start` run it first (test/e2e/packaging/old-node.e2e-spec.ts).
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..', '..');
const { supported } = require(join(REPO, 'bin', 'node-check.js')) as { supported(version: string): boolean };
const semver = require('semver') as { satisfies(v: string, range: string): boolean };
const engines = (require(join(REPO, 'package.json')) as { engines: { node: string } }).engines.node;

describe('bin/node-check.js', () => {
  const VERSIONS = ['16.20.2', '18.20.8', '20.19.0', '20.20.2', '21.7.3', '22.0.0', '22.12.0', '22.13.0', '22.23.3', '23.5.0', '24.0.0', '24.21.0', '25.2.1', '30.0.0'];

  it('admits 22 from 22.13 on and 24 and later, nothing older', () => {
    expect(VERSIONS.filter(supported)).toEqual(['22.13.0', '22.23.3', '24.0.0', '24.21.0', '25.2.1', '30.0.0']);
    expect(supported('v24.1.0')).toBe(true);
    expect(supported('v20.20.2')).toBe(false);
  });

  it("agrees with package.json's engines range", () => {
    expect(VERSIONS.filter((v) => supported(v) !== semver.satisfies(v, engines))).toEqual([]);
  });
});
