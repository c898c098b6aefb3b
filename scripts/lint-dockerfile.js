#!/usr/bin/env node
'use strict';
// A small offline Dockerfile linter for this project's image rules (hadolint is not installable
// here). Usage: node scripts/lint-dockerfile.js [Dockerfile]; prints `<file>:<line>: <rule>: <message>`
// per problem and exits 1 when there is any.
const fs = require('node:fs');
const path = require('node:path');

const PORT = '14355';
const RUNS_ROOT = '/data/runs';
/** The runtime base: the official Node 24 LTS image on Debian bookworm, slim variant (tag, optionally + digest). */
const RUNTIME_BASE = /^node:24(\.\d+){0,2}-bookworm-slim(@sha256:[0-9a-f]{64})?$/;
/** Packages the runtime stage must install: git (worktree tasks) and tini (the init process). */
const RUNTIME_PACKAGES = ['git', 'tini'];

/** Logical instructions: comments dropped, `\` continuations joined; line = where each starts. */
function parseInstructions(text) {
  const out = [];
  let current;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!current && /^\s*(#|$)/.test(line)) return;
    if (current && /^\s*#/.test(line)) return; // comment lines inside a continuation
    const continued = /\\\s*$/.test(line);
    const part = line.replace(/\\\s*$/, '');
    if (current) current.text += ` ${part.trim()}`;
    else current = { line: i + 1, text: part.trim() };
    if (!continued) {
      const m = /^(\S+)\s*(.*)$/.exec(current.text);
      out.push({ line: current.line, keyword: m[1].toUpperCase(), args: m[2] });
      current = undefined;
    }
  });
  if (current) {
    const m = /^(\S+)\s*(.*)$/.exec(current.text);
    out.push({ line: current.line, keyword: m[1].toUpperCase(), args: m[2] });
  }
  return out;
}

/** `["a", "b"]` (exec form) or shell-form words. */
function words(args) {
  const trimmed = args.trim();
  if (trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed).map(String);
    } catch {
      // fall through to shell form
    }
  }
  return trimmed.split(/\s+/).filter(Boolean);
}

function fromImage(args) {
  const parts = args.split(/\s+/).filter((w) => !w.startsWith('--'));
  return { image: parts[0] ?? '', alias: /^as$/i.test(parts[1] ?? '') ? parts[2] : undefined };
}

/** Package names of the `apt-get install` commands in RUN instructions (options and other commands dropped). */
function aptPackages(runs) {
  const names = new Set();
  for (const ins of runs) {
    for (const command of ins.args.split(/&&|;|\|\|/)) {
      const m = /\bapt-get\s+(?:\S+\s+)*?install\b(.*)$/.exec(command);
      if (m) for (const w of m[1].trim().split(/\s+/)) if (w && !w.startsWith('-')) names.add(w.replace(/=.*$/, ''));
    }
  }
  return names;
}

/** Problems found in a Dockerfile's text: [{ line, rule, message }]. */
function lintDockerfile(text) {
  const problems = [];
  const add = (line, rule, message) => problems.push({ line, rule, message });
  const instructions = parseInstructions(text);
  const stages = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') stages.push({ from: ins, body: [] });
    else if (stages.length) stages[stages.length - 1].body.push(ins);
  }
  if (!stages.length) {
    add(1, 'from', 'no FROM instruction');
    return problems;
  }
  if (stages.length < 2) add(stages[0].from.line, 'multi-stage', 'use a multi-stage build (build tools stay out of the runtime image)');

  const aliases = new Set();
  for (const { from } of stages) {
    const { image, alias } = fromImage(from.args);
    if (!aliases.has(image.toLowerCase())) {
      const at = image.indexOf('@');
      const name = at >= 0 ? image.slice(0, at) : image;
      const tag = name.includes(':') && !name.endsWith(':') ? name.slice(name.lastIndexOf(':') + 1) : '';
      if (image.startsWith('$')) add(from.line, 'from-pinned', `FROM ${image}: pin the base image with a literal tag`);
      else if (at < 0 && (!tag || tag.includes('/'))) add(from.line, 'from-pinned', `FROM ${image}: pin the base image by tag (e.g. node:24-bookworm-slim)`);
    }
    if (alias) aliases.add(alias.toLowerCase());
  }

  for (const ins of instructions) {
    if (/[:@]latest\b/.test(ins.args)) add(ins.line, 'no-latest', `${ins.keyword} uses a "latest" tag or version`);
    if (ins.keyword === 'RUN' && /apt-get install/.test(ins.args) && !/--no-install-recommends/.test(ins.args)) {
      add(ins.line, 'apt-recommends', 'apt-get install without --no-install-recommends');
    }
  }

  const final = stages[stages.length - 1];
  const last = (keyword) => final.body.filter((i) => i.keyword === keyword).pop();
  const runtimeImage = fromImage(final.from.args).image;
  if (!RUNTIME_BASE.test(runtimeImage)) add(final.from.line, 'base', `FROM ${runtimeImage}: the runtime stage should be node:24-bookworm-slim (Node 24 LTS, Debian slim)`);
  const installed = aptPackages(final.body.filter((i) => i.keyword === 'RUN'));
  for (const pkg of RUNTIME_PACKAGES) {
    if (!installed.has(pkg)) add(final.from.line, pkg === 'git' ? 'git' : 'init', `the runtime stage does not apt-get install ${pkg}`);
  }
  const entrypoint = last('ENTRYPOINT');
  const init = entrypoint ? words(entrypoint.args) : [];
  if (!entrypoint) add(final.from.line, 'init', 'the runtime stage has no ENTRYPOINT: run the server under tini (ENTRYPOINT ["/usr/bin/tini", "--"])');
  else if (!entrypoint.args.trim().startsWith('[') || !/(^|\/)tini$/.test(init[0] ?? '') || init[1] !== '--') {
    add(entrypoint.line, 'init', 'ENTRYPOINT should be the exec form ["/usr/bin/tini", "--"]: an init that forwards signals and reaps process trees');
  }
  const user = last('USER');
  if (!user) add(final.from.line, 'user', 'the runtime stage has no USER: run as a non-root user');
  else if (/^(root|0)(:|$)/.test(user.args.trim())) add(user.line, 'user', `USER ${user.args.trim()}: run as a non-root user`);

  const health = last('HEALTHCHECK');
  if (!health) add(final.from.line, 'healthcheck', 'the runtime stage has no HEALTHCHECK');
  else if (/^NONE\b/i.test(health.args.trim())) add(health.line, 'healthcheck', 'HEALTHCHECK NONE disables the health check');
  else if (!health.args.includes('/api/v1/health')) add(health.line, 'healthcheck', 'HEALTHCHECK should probe /api/v1/health');

  const exposed = final.body.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => words(i.args).map((p) => p.split('/')[0]));
  if (!exposed.includes(PORT)) add(final.from.line, 'expose', `the runtime stage does not EXPOSE ${PORT}`);

  const volumes = final.body.filter((i) => i.keyword === 'VOLUME').flatMap((i) => words(i.args));
  if (!volumes.includes(RUNS_ROOT)) add(final.from.line, 'volume', `the runtime stage has no VOLUME for the runs root ${RUNS_ROOT}`);
  const rootEnv = final.body.filter((i) => i.keyword === 'ENV').some((i) => new RegExp(`(^|\\s)CONDUCTOR_ROOT[= ]${RUNS_ROOT}(\\s|$)`).test(i.args));
  if (!rootEnv) add(final.from.line, 'volume', `the runtime stage should set ENV CONDUCTOR_ROOT=${RUNS_ROOT}`);

  if (!last('CMD') && !last('ENTRYPOINT')) add(final.from.line, 'cmd', 'the runtime stage has no CMD or ENTRYPOINT');
  return problems.sort((a, b) => a.line - b.line);
}

module.exports = { lintDockerfile, parseInstructions };

if (require.main === module) {
  const file = process.argv[2] ?? path.join(__dirname, '..', 'Dockerfile');
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    process.stderr.write(`Error: cannot read ${file}: ${err.message}\n`);
    process.exit(2);
  }
  const problems = lintDockerfile(text);
  for (const p of problems) process.stdout.write(`${file}:${p.line}: ${p.rule}: ${p.message}\n`);
  if (problems.length) process.exitCode = 1;
  else process.stdout.write(`${file}: ok\n`);
}
