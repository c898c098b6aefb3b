import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

interface PackageManifest {
  name?: string;
  version?: string;
}

/** The nearest package.json above `from` that is this package's (the repo or the installed package). */
function findManifest(from: string): { dir: string; manifest: PackageManifest } | undefined {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageManifest;
      if (manifest.name === 'conductor-loop') return { dir, manifest };
    } catch {
      // no readable package.json here: keep walking up
    }
  }
  return undefined;
}

/** The folder holding this package's package.json. */
export function packageRoot(from = __dirname): string {
  const found = findManifest(from);
  if (!found) throw new Error(`cannot locate the conductor-loop package above ${from}`);
  return found.dir;
}

/** The package version, or `dev` when no manifest is found. */
export function productVersion(): string {
  return findManifest(__dirname)?.manifest.version || 'dev';
}

/** `--version`: one line, or `{"name":…,"version":…}` with --json. */
export function versionText(programName: string, json = false): string {
  return json ? `${JSON.stringify({ name: programName, version: productVersion() })}\n` : `${programName} ${productVersion()}\n`;
}

