import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package version, read from the nearest package.json above the built file. */
export function productVersion(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'conductor-loop' && pkg.version) return pkg.version;
    } catch {
      // no readable package.json here: keep walking up
    }
  }
  return 'dev';
}

export function versionBanner(programName: string): string {
  return `${programName} ${productVersion()}\nBy @jonnyzzz · https://linkedin.com/in/jonnyzzz\n`;
}
