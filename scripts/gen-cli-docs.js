#!/usr/bin/env node
'use strict';
// Generates docs/cli-reference.md from the commands' own `--help`: walks the command trees of the
// built bin/run-agent and bin/conductor by running them with --help recursively.
//   node scripts/gen-cli-docs.js           write docs/cli-reference.md
//   node scripts/gen-cli-docs.js --check   exit 1 when docs/cli-reference.md differs (drift)
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const DOC = path.join(ROOT, 'docs', 'cli-reference.md');
const PROGRAMS = ['run-agent', 'conductor'];
const CONCURRENCY = 3;

/** An environment that cannot change help output: no runs-root/config variables, a fixed HOME. */
function helpEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(CONDUCTOR_|RUN_AGENT_|JRUN_|COLUMNS$|LINES$)/.test(k)) env[k] = v;
  }
  env.HOME = path.join(os.tmpdir(), 'conductor-loop-docs-home');
  env.NO_COLOR = '1';
  return env;
}

function runHelpOnce(binDir, program, words) {
  return new Promise((resolve, reject) => {
    const args = [path.join(binDir, program), ...words, '--help'];
    execFile(process.execPath, args, { cwd: os.tmpdir(), env: helpEnv(), timeout: 60000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${program} ${words.join(' ')} --help failed: ${String(stderr || err.message).trim().split('\n')[0]}`));
      resolve(stdout.split('\n').map((l) => l.trimEnd()).join('\n').trim());
    });
  });
}

/** Every command's help of `program` from one process (scripts/cli-help-dump.js). */
function dumpHelps(binDir, program, extraTopLevel = []) {
  const script = path.join(binDir, '..', 'scripts', 'cli-help-dump.js');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, program, ...extraTopLevel], { cwd: os.tmpdir(), env: helpEnv(), timeout: 120000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`help dump of ${program} failed: ${String(stderr || err.message).trim().split('\n')[0]}`));
      const map = new Map();
      for (const [words, help] of Object.entries(JSON.parse(stdout))) map.set(words, help.split('\n').map((l) => l.trimEnd()).join('\n').trim());
      resolve(map);
    });
  });
}

const dumps = new Map();

/** A command's help: from the one-process dump, else (a path the dump lacks) its own --help run. */
async function runHelp(binDir, program, words, extraTopLevel) {
  const key = `${binDir}\0${program}`;
  if (!dumps.has(key)) dumps.set(key, dumpHelps(binDir, program, extraTopLevel).catch(() => new Map()));
  const help = (await dumps.get(key)).get(words.join(' '));
  if (help !== undefined) return help;
  try {
    return await runHelpOnce(binDir, program, words);
  } catch {
    return runHelpOnce(binDir, program, words);
  }
}

/** Names listed under "Commands:" in commander's help (continuation lines are indented deeper). */
function subcommandNames(help) {
  const names = [];
  let inCommands = false;
  for (const line of help.split('\n')) {
    if (/^\S/.test(line)) inCommands = line.trim() === 'Commands:';
    else if (inCommands) {
      const m = /^ {2}(\S+)/.exec(line);
      const name = m && m[1].split('|')[0]; // `name|alias [options]`
      if (name && name !== 'help') names.push(name);
    }
  }
  return names;
}

/** Runs `jobs` (functions returning promises) at most `limit` at a time, keeping their order. */
async function pool(jobs, limit) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

/**
 * Walks a program's tree breadth-first. `skip(words, help)` returns true for commands whose
 * subtree needs no walk (conductor commands identical to run-agent's).
 */
async function walk(binDir, program, skip = () => false, extraTopLevel = []) {
  const found = [];
  let level = [[]];
  while (level.length) {
    const helps = await pool(level.map((words) => () => runHelp(binDir, program, words, extraTopLevel)), CONCURRENCY);
    const nextLevel = [];
    level.forEach((words, i) => {
      found.push({ words, help: helps[i] });
      if (skip(words, helps[i])) return;
      const names = subcommandNames(helps[i]);
      if (words.length === 0) for (const name of extraTopLevel) if (!names.includes(name)) names.push(name);
      for (const name of names) nextLevel.push([...words, name]);
    });
    level = nextLevel;
  }
  return found.sort((a, b) => a.words.join(' ').localeCompare(b.words.join(' ')));
}

const title = (program, words) => [program, ...words].join(' ');
const anchor = (text) => text.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');

function section(program, entry) {
  return [`### \`${title(program, entry.words)}\``, '', '```text', entry.help, '```', ''];
}

/** First words that `conductor` answers with `run-agent server <word>` (D16), from the build. */
function conductorClientWords(binDir) {
  const dispatch = path.join(binDir, '..', 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'commands', 'server', 'conductor-dispatch.js');
  return require(dispatch).CONDUCTOR_CLIENT_SUBCOMMANDS;
}

/** The markdown text of docs/cli-reference.md for the built executables in binDir. */
async function generate(binDir = path.join(ROOT, 'bin')) {
  const runAgent = await walk(binDir, 'run-agent');
  const byPath = new Map(runAgent.map((e) => [e.words.join(' '), e.help]));
  const sameAsRunAgent = (words, help) =>
    words.length > 0 && byPath.get(words.join(' ')) === help.replace(/^Usage: conductor\b/, 'Usage: run-agent');
  // Only words that really have a `server <word>` command (the dispatch list may run ahead of it).
  const clientWords = conductorClientWords(binDir).filter((w) => byPath.has(`server ${w}`));
  const conductor = await walk(binDir, 'conductor', sameAsRunAgent, clientWords);

  const out = [
    '# CLI reference',
    '',
    '<!-- Generated by scripts/gen-cli-docs.js from the commands\' own --help. Do not edit by hand:',
    '     run `npm run docs:cli` after changing a command (a test fails when this file drifts). -->',
    '',
    '`run-agent` is the local CLI: it works on the runs root without a server. `conductor` is the same',
    'program started under another name: with no subcommand (or only flags) it runs the API server',
    '(`conductor serve`), and its subcommands that share a name with a `run-agent server …` command',
    '(`status`, `task`, `job`, `bus`, …) are those HTTP clients.',
    'Exit codes: 0 ok, 1 failure, 2 bad input (a wrong flag or value, an unknown project, task, run, agent or',
    '`--status` value, which names the closest existing one: `(did you mean "…"?)`, a missing or broken config).',
    'Errors are one line on stderr: `Error: <message>`; under `--json` the line is the API\'s error envelope',
    '`{"error":{"code":"NOT_FOUND","message":"…"}}` (`code`: the domain code, `USAGE` for a usage error,',
    '`FAILED` when untyped), and stdout carries only results.',
    'Shell completion: `source <(run-agent completion bash)` (also `zsh`, `fish`; same for `conductor`).',
    '',
  ];
  for (const [program, entries] of [['run-agent', runAgent], ['conductor', conductor]]) {
    out.push(`## ${program}`, '');
    for (const e of entries) out.push(`- [\`${title(program, e.words)}\`](#${anchor(title(program, e.words))})`);
    out.push('');
    for (const e of entries) {
      if (program === 'conductor' && sameAsRunAgent(e.words, e.help)) {
        const target = title('run-agent', e.words);
        out.push(`### \`${title(program, e.words)}\``, '', `Same as [\`${target}\`](#${anchor(target)}) (and its subcommands).`, '');
      } else out.push(...section(program, e));
    }
  }
  return out.join('\n');
}

async function main(argv) {
  const check = argv.includes('--check');
  const text = await generate();
  if (check) {
    const current = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(`${path.relative(ROOT, DOC)} is out of date with the commands' --help: run \`npm run docs:cli\`\n`);
      process.exitCode = 1;
    }
    return;
  }
  fs.writeFileSync(DOC, text);
  process.stdout.write(`wrote ${path.relative(ROOT, DOC)}\n`);
}

module.exports = { generate, subcommandNames, DOC, PROGRAMS };

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exitCode = 1;
  });
}
