import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..', '..');
const LINTER = join(REPO, 'scripts', 'lint-dockerfile.js');
const { lintDockerfile } = require(LINTER) as { lintDockerfile: (text: string) => { line: number; rule: string; message: string }[] };

const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
const rules = (text: string) => lintDockerfile(text).map((p) => p.rule);

describe('scripts/lint-dockerfile.js', () => {
  it('finds no problem in the project Dockerfile', () => {
    expect(lintDockerfile(dockerfile)).toEqual([]);
  });

  it('requires pinned base images and no latest tags', () => {
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS build', 'FROM node AS build'))).toEqual(['from-pinned']);
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS build', 'FROM node:latest AS build'))).toEqual(['no-latest']);
    expect(rules(dockerfile.replace('npm install -g', 'npm install -g @openai/codex@latest'))).toEqual(['no-latest']);
    // a digest pins as well as a tag
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS runtime', `FROM node:24-bookworm-slim@sha256:${'a'.repeat(64)} AS runtime`))).toEqual([]);
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS build', `FROM node@sha256:${'a'.repeat(64)} AS build`))).toEqual([]);
  });

  it('requires the Node 24 bookworm-slim base for the runtime stage', () => {
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS runtime', 'FROM node:22-bookworm-slim AS runtime'))).toEqual(['base']);
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS runtime', 'FROM node:24-bookworm AS runtime'))).toEqual(['base']);
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS runtime', 'FROM node:24.11.1-bookworm-slim AS runtime'))).toEqual([]);
    // the build stages may use another base
    expect(rules(dockerfile.replace('FROM node:24-bookworm-slim AS build', 'FROM node:24-bookworm AS build'))).toEqual([]);
  });

  it('requires git and tini in the runtime stage and tini as the exec-form ENTRYPOINT', () => {
    const runtime = dockerfile.indexOf('AS runtime');
    const inRuntime = (from: string, to: string) => dockerfile.slice(0, runtime) + dockerfile.slice(runtime).replace(from, to);
    expect(rules(inRuntime('--no-install-recommends git tini', '--no-install-recommends tini'))).toEqual(['git']);
    expect(rules(inRuntime('--no-install-recommends git tini', '--no-install-recommends git'))).toEqual(['init']);
    // git installed in a build stage only does not count
    expect(rules(inRuntime('--no-install-recommends git tini', '--no-install-recommends tini').replace('python3 make g++', 'python3 make g++ git'))).toEqual(['git']);
    expect(rules(dockerfile.replace('ENTRYPOINT ["/usr/bin/tini", "--"]\n', ''))).toEqual(['init']);
    expect(rules(dockerfile.replace('ENTRYPOINT ["/usr/bin/tini", "--"]', 'ENTRYPOINT /usr/bin/tini --'))).toEqual(['init']);
    expect(rules(dockerfile.replace('ENTRYPOINT ["/usr/bin/tini", "--"]', 'ENTRYPOINT ["conductor"]'))).toEqual(['init']);
    expect(rules(dockerfile.replace('ENTRYPOINT ["/usr/bin/tini", "--"]', 'ENTRYPOINT ["tini", "--"]'))).toEqual([]);
  });

  it('requires a non-root USER in the runtime stage', () => {
    expect(rules(dockerfile.replace('USER node', 'USER root'))).toEqual(['user']);
    expect(rules(dockerfile.replace('USER node', ''))).toEqual(['user']);
    expect(rules(dockerfile.replace('USER node', 'USER 0:0'))).toEqual(['user']);
    expect(rules(dockerfile.replace('USER node', 'USER 1000:1000'))).toEqual([]);
  });

  it('requires HEALTHCHECK on /api/v1/health, EXPOSE 14355, the runs-root VOLUME and its ENV', () => {
    const healthStart = dockerfile.indexOf('\nHEALTHCHECK ') + 1;
    const healthEnd = dockerfile.indexOf('\n', dockerfile.indexOf('CMD ["node"', healthStart));
    expect(rules(dockerfile.slice(0, healthStart) + dockerfile.slice(healthEnd + 1))).toEqual(['healthcheck']);
    expect(rules(dockerfile.replace('EXPOSE 14355', 'EXPOSE 8080'))).toEqual(['expose']);
    expect(rules(dockerfile.replace('VOLUME ["/data/runs"]', 'VOLUME ["/data"]'))).toEqual(['volume']);
    expect(rules(dockerfile.replace('CONDUCTOR_ROOT=/data/runs', 'CONDUCTOR_ROOT=/srv/runs'))).toEqual(['volume']);
  });

  it('requires a multi-stage build and --no-install-recommends', () => {
    const single = 'FROM node:24-bookworm-slim\nRUN apt-get install -y git tini\nENV CONDUCTOR_ROOT=/data/runs\nUSER node\nVOLUME /data/runs\nEXPOSE 14355\nHEALTHCHECK CMD node -e "fetch(\'http://127.0.0.1:14355/api/v1/health\')"\nENTRYPOINT ["tini", "--"]\nCMD ["conductor"]\n';
    expect(rules(single)).toEqual(['multi-stage', 'apt-recommends']);
  });

  it('reports file:line: rule: message and exits 1 from the command line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lint-docker-'));
    try {
      const file = join(dir, 'Dockerfile');
      writeFileSync(file, dockerfile.replace('USER node', 'USER 0'));
      let status = 0;
      let stdout = '';
      try {
        execFileSync(process.execPath, [LINTER, file], { encoding: 'utf8' });
      } catch (err) {
        ({ status, stdout } = err as { status: number; stdout: string });
      }
      expect(status).toBe(1);
      const userLine = dockerfile.split('\n').findIndex((l) => l === 'USER node') + 1;
      expect(stdout).toBe(`${file}:${userLine}: user: USER 0: run as a non-root user\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
