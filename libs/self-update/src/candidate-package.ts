import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const PACKAGE_NAME = 'conductor-loop';

/** What POST /api/v1/admin/self-update asked for, validated (a bad request changes nothing). */
export type Candidate = { kind: 'tarball'; path: string } | { kind: 'registry'; spec: string };

export class CandidateError extends Error {}

const VERSION_PATTERN = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const TARBALL_PATTERN = /\.(tgz|tar\.gz)$/i;

function looksLikePath(value: string): boolean {
  return value.includes('/') || TARBALL_PATTERN.test(value) || value.startsWith('.');
}

function tarballCandidate(value: string, field: string, cwd: string): Candidate {
  const abs = path.resolve(cwd, value);
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (err) {
    throw new CandidateError(`${field}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? `no such file: ${abs}` : (err as Error).message}`);
  }
  if (!st.isFile()) throw new CandidateError(`${field} must point to a file`);
  if (!TARBALL_PATTERN.test(abs)) throw new CandidateError(`${field} must point to a .tgz made by npm pack`);
  return { kind: 'tarball', path: abs };
}

/** `package` wins over upstream's `binary_path`; versions resolve to `conductor-loop@<version>`. */
export function parseCandidate(body: { package?: string; binary_path?: string }, cwd = process.cwd()): Candidate {
  const pkg = body.package?.trim();
  const binary = body.binary_path?.trim();
  if (!pkg && !binary) throw new CandidateError('package is required (a .tgz made by npm pack, or a version)');
  if (!pkg) return tarballCandidate(binary!, 'binary_path', cwd);
  if (looksLikePath(pkg)) return tarballCandidate(pkg, 'package', cwd);
  const version = pkg.startsWith(`${PACKAGE_NAME}@`) ? pkg.slice(PACKAGE_NAME.length + 1) : pkg;
  if (!VERSION_PATTERN.test(version)) {
    throw new CandidateError(`package must be a .tgz path, a version like 0.2.0 or ${PACKAGE_NAME}@<version>: got "${pkg}"`);
  }
  return { kind: 'registry', spec: `${PACKAGE_NAME}@${version}` };
}

export function describeCandidate(c: Candidate): string {
  return c.kind === 'tarball' ? c.path : c.spec;
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Runs a command without a shell; rejects with the command's stderr (last line) on failure. */
export function run(file: string, args: string[], opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: opts.cwd, timeout: opts.timeoutMs ?? 60_000, env: opts.env ?? process.env, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (!err) return resolve({ stdout, stderr });
      const detail = stderr.trim().split('\n').pop() || err.message;
      const how = (err as { killed?: boolean }).killed ? `timed out after ${(opts.timeoutMs ?? 60_000) / 1000}s` : `failed`;
      reject(new Error(`${path.basename(file)} ${args.join(' ')} ${how}: ${detail}`));
    });
  });
}

/** Downloads a registry version into `dir` with `npm pack`; returns the tarball path. */
export async function packFromRegistry(spec: string, dir: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', spec, '--pack-destination', dir, '--silent'], { cwd: dir, timeoutMs: 120_000 });
  const name = stdout.trim().split('\n').pop() ?? '';
  const file = path.join(dir, name);
  if (!name || !fs.existsSync(file)) throw new Error(`npm pack ${spec} produced no tarball`);
  return file;
}

/**
 * Checks that a tarball has the `npm pack` layout (every entry under `package/`, no absolute or
 * `..` paths, no links leaving it) and extracts it into `stagingDir`; returns `<stagingDir>/package`.
 */
export async function extractPackage(tarball: string, stagingDir: string): Promise<string> {
  const { stdout } = await run('tar', ['-tzvf', tarball]).catch((err: Error) => {
    throw new Error(`not a gzip tar archive: ${err.message}`);
  });
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  const { stdout: names } = await run('tar', ['-tzf', tarball]);
  const entries = names.split('\n').filter((n) => n !== '');
  if (entries.length === 0) throw new Error('the archive is empty');
  for (const entry of entries) {
    const clean = entry.replace(/^\.\//, '');
    if (path.isAbsolute(clean) || clean.split('/').includes('..') || !(clean === 'package' || clean === 'package/' || clean.startsWith('package/'))) {
      throw new Error(`unexpected entry "${entry}" (an npm pack tarball holds only package/…)`);
    }
  }
  // symbolic and hard links could point outside the staging folder once extracted
  if (lines.some((l) => l.startsWith('l') || l.startsWith('h'))) throw new Error('the archive contains links');
  if (!entries.some((n) => n.replace(/^\.\//, '') === 'package/package.json')) throw new Error('package/package.json is missing');
  fs.mkdirSync(stagingDir, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', stagingDir, '--no-same-owner']);
  const dir = path.join(stagingDir, 'package');
  const manifest = readManifest(dir);
  if (manifest.name !== PACKAGE_NAME) throw new Error(`package name is "${String(manifest.name)}", expected "${PACKAGE_NAME}"`);
  return dir;
}

export function readManifest(dir: string): { name?: unknown; version?: unknown; dependencies?: Record<string, string> } {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  } catch (err) {
    throw new Error(`package.json unreadable: ${(err as Error).message}`);
  }
}

/** Dependencies the package declares that its node_modules does not hold. */
export function missingDependencies(dir: string): string[] {
  const deps = Object.keys(readManifest(dir).dependencies ?? {});
  return deps.filter((d) => !fs.existsSync(path.join(dir, 'node_modules', d, 'package.json')));
}

/** The default dependency step: `npm install --omit=dev` only when something is missing. */
export async function installDependencies(dir: string): Promise<void> {
  if (missingDependencies(dir).length === 0) return;
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund'], { cwd: dir, timeoutMs: 300_000 });
}

/** Runs the candidate's `bin/run-agent --version`; returns its first output line. */
export async function candidateVersion(dir: string): Promise<string> {
  const bin = path.join(dir, 'bin', 'run-agent');
  if (!fs.existsSync(bin)) throw new Error('bin/run-agent is missing');
  const { stdout } = await run(process.execPath, [bin, '--version'], { cwd: dir, timeoutMs: 10_000 });
  return stdout.trim().split('\n')[0] ?? '';
}
