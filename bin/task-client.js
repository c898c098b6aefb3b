'use strict';
// `run-agent task` and `run-agent job` through the host's task supervisor (RUN_AGENT_SUPERVISOR=1;
// docs/operations.md, "the task supervisor"): this process stays in the foreground, prints what the
// command prints and exits with its code, while the loop or run itself goes on in a shared
// supervisor (apps/cli/src/supervisor), so a host's sixty tasks, or a tree's 200 sub-agents, cost a
// few runners' memory and start-up (one per core), not one each. Plain Node only: no bundle loads here.
//
// The supervisors of one environment and working directory: the socket's name is a hash of both
// (and of the CLI build) and the client's shard. The per-run variables an agent gets from its runner
// (JRUN_* and the short names; apps/cli/src/supervisor/per-run-env.ts) are left out of the hash, so
// a whole tree shares them; each request carries this process's environment, and the command reads
// them there.
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
// not node:crypto's SHA-256: loading it was a fifth of this client's CPU
const fnv1a64 = require('./fnv1a64');

const START_TIMEOUT_MS = 15000;
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** RUN_AGENT_SUPERVISOR: on for 1/true/yes, off when unset or 0/false/no; anything else is a config error. */
function supervisorWanted(env) {
  const raw = (env.RUN_AGENT_SUPERVISOR ?? '').trim().toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false' || raw === 'no') return false;
  if (raw === '1' || raw === 'true' || raw === 'yes') return true;
  throw usage(`RUN_AGENT_SUPERVISOR must be 1 or 0 (got "${env.RUN_AGENT_SUPERVISOR}")`);
}

function usage(message) {
  return Object.assign(new Error(message), { exitCode: 2 });
}

/** A private folder for the sockets: ours, a real folder (no symlink), closed to group and others. */
function socketDir(env) {
  const uid = process.getuid();
  const dir = env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, 'run-agent') : path.join(os.tmpdir(), `run-agent-${uid}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw usage(`the task supervisor's folder ${dir} is not a private folder of this user (mode 0700, not a symlink); remove it or unset RUN_AGENT_SUPERVISOR`);
  }
  return dir;
}

const SHORT_RUN_NAMES = new Set(['MESSAGE_BUS', 'TASK_FOLDER', 'RUN_FOLDER']);

/** A variable a runner sets per run for its agent (the rule of apps/cli/src/supervisor/per-run-env.ts). */
function isPerRunVariable(name) {
  return name.startsWith('JRUN_') || SHORT_RUN_NAMES.has(name);
}

/**
 * RUN_AGENT_SUPERVISOR_SHARDS: how many supervisors share the requests of one environment (default:
 * one per core). Each serves its requests one at a time between its blocking durable writes and
 * spawns, so a burst of sixty starts waits on one supervisor's queue (docs/decisions/fanout-and-capacity.md).
 */
function shardCount(env) {
  const raw = (env.RUN_AGENT_SUPERVISOR_SHARDS ?? '').trim();
  if (raw === '') return os.availableParallelism();
  if (!/^[1-9]\d*$/.test(raw) || Number(raw) > 64) throw usage(`RUN_AGENT_SUPERVISOR_SHARDS must be a whole number from 1 to 64 (got "${env.RUN_AGENT_SUPERVISOR_SHARDS}")`);
  return Number(raw);
}

/** The supervisor of process `pid` among `shards`: Fibonacci hashing, so a burst of consecutive (or all even) pids spreads evenly. */
function shardOf(pid, shards) {
  return Math.floor(((Math.imul(pid, 0x9e3779b1) >>> 0) / 2 ** 32) * shards);
}

/** The socket of this client's supervisor for this build, working directory and environment (less the per-run variables). */
function socketPath(entry) {
  const env = Object.keys(process.env)
    .filter((k) => k !== '_' && !isPerRunVariable(k))
    .sort()
    .map((k) => [k, process.env[k]]);
  const key = fnv1a64(JSON.stringify([process.execPath, entry, fs.statSync(entry).mtimeMs, process.cwd(), env]));
  return path.join(socketDir(process.env), `${key}-${shardOf(process.pid, shardCount(process.env))}.sock`);
}

function connect(sock) {
  return new Promise((resolve, reject) => {
    const conn = net.connect(sock);
    conn.once('connect', () => resolve(conn));
    conn.once('error', reject);
  });
}

/**
 * Claims the start of the supervisor of `sock` (`<sock>.starting`, created exclusively), so sixty
 * clients arriving at once start one supervisor, not sixty. A claim older than the start timeout
 * is a starter that died: it is taken over.
 */
function claimStart(sock) {
  const marker = `${sock}.starting`;
  try {
    fs.closeSync(fs.openSync(marker, 'wx', 0o600));
    return true;
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
  const since = fs.statSync(marker, { throwIfNoEntry: false });
  if (!since || Date.now() - since.mtimeMs < START_TIMEOUT_MS) return false;
  fs.rmSync(marker, { force: true });
  return claimStart(sock);
}

function startSupervisor(sock, log) {
  const out = fs.openSync(log, 'a', 0o600);
  // node:child_process only here: most clients find the supervisor listening
  const { spawn } = require('node:child_process');
  const child = spawn(process.execPath, [path.join(__dirname, 'task-supervisor.js'), sock], { detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const state = {};
  child.once('exit', (code, signal) => {
    state.exited = code ?? signal;
    fs.rmSync(`${sock}.starting`, { force: true });
  });
  child.unref();
  return state;
}

/** Connects to the supervisor of `sock`, starting it when nobody answers (the supervisor removes `<sock>.starting` once it listens). */
async function reachSupervisor(sock) {
  const log = sock.replace(/\.sock$/, '.log');
  let started;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, 50)) {
    try {
      return await connect(sock);
    } catch (err) {
      if (err.code !== 'ENOENT' && err.code !== 'ECONNREFUSED') throw err;
    }
    if (!started && claimStart(sock)) started = startSupervisor(sock, log);
    // exit 0: another supervisor owns the socket and is about to listen
    if (started?.exited !== undefined && started.exited !== 0) throw new Error(`the task supervisor ended (${started.exited}) before this client reached it, so no task started; see ${log}`);
    if (Date.now() > deadline) throw new Error(`the task supervisor did not listen within ${START_TIMEOUT_MS / 1000} s; see ${log}, or unset RUN_AGENT_SUPERVISOR to run the task in this process`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * Runs `task <args>` or `job <args>` in the supervisor. Resolves true once the command's exit code
 * is set, false when the supervisor hands the command back (help, usage errors, `job --follow`): the
 * caller then runs it itself.
 */
async function runSupervised(args, entry) {
  if (!supervisorWanted(process.env)) return false;
  const conn = await reachSupervisor(socketPath(entry));
  conn.setEncoding('utf8');
  conn.write(`${JSON.stringify({ argv: args, cwd: process.cwd(), env: process.env, pid: process.pid, tty: !!process.stderr.isTTY, columns: process.stderr.columns })}\n`);
  let pid;
  let received;
  const onSignal = (signal) => {
    if (received) {
      // a second signal: leave now; the supervisor stops the task when the socket closes
      FORWARDED_SIGNALS.forEach((s) => process.removeListener(s, onSignal));
      process.kill(process.pid, signal);
      return;
    }
    received = signal;
    conn.write(`${JSON.stringify({ signal })}\n`);
  };
  FORWARDED_SIGNALS.forEach((s) => process.on(s, onSignal));
  const ended = await new Promise((resolve) => {
    let buffered = '';
    let result;
    conn.on('data', (chunk) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const msg = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (msg.pid) pid = msg.pid;
        if (typeof msg.err === 'string') process.stderr.write(msg.err);
        if (msg.fallback !== undefined) result = { fallback: true };
        if (typeof msg.exit === 'number') result = { exit: msg.exit };
      }
    });
    conn.on('error', () => undefined);
    conn.on('close', () => resolve(result));
  });
  FORWARDED_SIGNALS.forEach((s) => process.removeListener(s, onSignal));
  if (ended?.fallback) return false;
  if (received) {
    // as an in-process `task` does: its agents stopped, it dies of the signal
    process.kill(process.pid, received);
    return true;
  }
  if (!ended) {
    process.stderr.write(`Error: the task supervisor${pid ? ` (pid ${pid})` : ''} ended before the task did; its agents were stopped. \`run-agent status\` shows the task; \`run-agent resume\` continues it\n`);
    process.exitCode = 1;
    return true;
  }
  process.exitCode = ended.exit;
  return true;
}

module.exports = { runSupervised, supervisorWanted, isPerRunVariable, shardCount, shardOf };
