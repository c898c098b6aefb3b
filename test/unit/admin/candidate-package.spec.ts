import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CandidateError,
  candidateVersion,
  extractPackage,
  installDependencies,
  missingDependencies,
  parseCandidate,
} from '@app/self-update';

describe('self-update candidate package', () => {
  let tmp: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'candidate-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** Writes `files` under tmp/src and tars the given top-level entries. */
  function tarball(files: Record<string, string>, name = 'c.tgz', top = ['package']): string {
    const src = path.join(tmp, `src-${name}`);
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
      fs.writeFileSync(path.join(src, rel), text);
    }
    const out = path.join(tmp, name);
    execFileSync('tar', ['-czf', out, '-C', src, ...top]);
    return out;
  }

  const manifest = (extra: object = {}) => JSON.stringify({ name: 'conductor-loop', version: '2.0.0', ...extra });

  describe('parseCandidate', () => {
    it('reads versions, name@version and tarball paths (relative to the given cwd)', () => {
      const file = tarball({ 'package/package.json': manifest() });
      expect(parseCandidate({ package: '0.2.0' })).toEqual({ kind: 'registry', spec: 'conductor-loop@0.2.0' });
      expect(parseCandidate({ package: 'conductor-loop@1.2.3-rc.1' })).toEqual({ kind: 'registry', spec: 'conductor-loop@1.2.3-rc.1' });
      expect(parseCandidate({ package: 'c.tgz' }, tmp)).toEqual({ kind: 'tarball', path: file });
      expect(parseCandidate({ binary_path: file })).toEqual({ kind: 'tarball', path: file });
      expect(parseCandidate({ package: '0.3.0', binary_path: file })).toEqual({ kind: 'registry', spec: 'conductor-loop@0.3.0' });
    });

    it.each([
      [{}, 'package is required (a .tgz made by npm pack, or a version)'],
      [{ package: '  ' }, 'package is required (a .tgz made by npm pack, or a version)'],
      [{ package: 'other-pkg@1.0.0' }, 'package must be a .tgz path, a version like 0.2.0 or conductor-loop@<version>: got "other-pkg@1.0.0"'],
      [{ package: '1.2' }, 'package must be a .tgz path, a version like 0.2.0 or conductor-loop@<version>: got "1.2"'],
    ])('rejects %j', (body, message) => {
      expect(() => parseCandidate(body)).toThrow(new CandidateError(message));
    });

    it('rejects missing files, folders and files that are not tarballs', () => {
      fs.writeFileSync(path.join(tmp, 'run-agent'), '#!/bin/sh\n');
      expect(() => parseCandidate({ package: path.join(tmp, 'nope.tgz') })).toThrow(`package: no such file: ${path.join(tmp, 'nope.tgz')}`);
      expect(() => parseCandidate({ binary_path: tmp })).toThrow('binary_path must point to a file');
      expect(() => parseCandidate({ binary_path: path.join(tmp, 'run-agent') })).toThrow('binary_path must point to a .tgz made by npm pack');
    });
  });

  describe('extractPackage', () => {
    it('extracts an npm pack tarball and returns its package folder', async () => {
      const file = tarball({ 'package/package.json': manifest(), 'package/bin/run-agent': 'x' });
      const dir = await extractPackage(file, path.join(tmp, 'stage'));
      expect(dir).toBe(path.join(tmp, 'stage', 'package'));
      expect(fs.readFileSync(path.join(dir, 'bin', 'run-agent'), 'utf8')).toBe('x');
    });

    it('refuses another package, entries outside package/, links, a missing manifest and non-gzip files', async () => {
      const stage = path.join(tmp, 'stage');
      await expect(extractPackage(tarball({ 'package/package.json': JSON.stringify({ name: 'left-pad' }) }, 'a.tgz'), stage)).rejects.toThrow(
        'package name is "left-pad", expected "conductor-loop"',
      );
      await expect(extractPackage(tarball({ 'package/package.json': manifest(), 'evil/x': 'x' }, 'b.tgz', ['package', 'evil']), stage)).rejects.toThrow(
        'unexpected entry "evil/" (an npm pack tarball holds only package/…)',
      );
      await expect(extractPackage(tarball({ 'package/README.md': 'x' }, 'c.tgz'), stage)).rejects.toThrow('package/package.json is missing');
      const linked = path.join(tmp, 'src-d.tgz', 'package');
      fs.mkdirSync(linked, { recursive: true });
      fs.writeFileSync(path.join(linked, 'package.json'), manifest());
      fs.symlinkSync('/etc/passwd', path.join(linked, 'passwd'));
      const withLink = path.join(tmp, 'd.tgz');
      execFileSync('tar', ['-czf', withLink, '-C', path.dirname(linked), 'package']);
      await expect(extractPackage(withLink, stage)).rejects.toThrow('the archive contains links');
      const text = path.join(tmp, 'e.tgz');
      fs.writeFileSync(text, 'not a tarball');
      await expect(extractPackage(text, stage)).rejects.toThrow(/^not a gzip tar archive: /);
      expect(fs.existsSync(path.join(stage, 'package', 'passwd'))).toBe(false);
    });
  });

  describe('dependencies and version check', () => {
    it('lists only the dependencies node_modules lacks; nothing to install means no npm run', async () => {
      const dir = path.join(tmp, 'pkg');
      fs.mkdirSync(path.join(dir, 'node_modules', 'yaml'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'node_modules', 'yaml', 'package.json'), '{}');
      fs.writeFileSync(path.join(dir, 'package.json'), manifest({ dependencies: { yaml: '2.0.0', chalk: '5.0.0' } }));
      expect(missingDependencies(dir)).toEqual(['chalk']);
      fs.writeFileSync(path.join(dir, 'package.json'), manifest({ dependencies: { yaml: '2.0.0' } }));
      expect(missingDependencies(dir)).toEqual([]);
      await installDependencies(dir);
      expect(fs.readdirSync(dir).sort()).toEqual(['node_modules', 'package.json']);
    });

    it("runs the candidate's bin/run-agent --version and reports failures", async () => {
      const dir = path.join(tmp, 'pkg');
      fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
      await expect(candidateVersion(dir)).rejects.toThrow('bin/run-agent is missing');
      fs.writeFileSync(path.join(dir, 'bin', 'run-agent'), "process.stdout.write('run-agent 2.0.0\\n');");
      await expect(candidateVersion(dir)).resolves.toBe('run-agent 2.0.0');
      fs.writeFileSync(path.join(dir, 'bin', 'run-agent'), "process.stderr.write('Error: broken build\\n'); process.exit(1);");
      await expect(candidateVersion(dir)).rejects.toThrow(/run-agent --version failed: Error: broken build$/);
    });
  });
});
