'use strict';
// Message bus throughput and latency (targets from the messagebus brief):
//   single-writer append ≥ 100k msg/s, 10 writer processes ≥ 70k msg/s in total,
//   since-id read of the last 10 messages of a 100k-message bus ≤ 5 ms,
//   `run-agent bus post` wall time ≤ 2× a bare `node -e 0` (same run).
// The library figures run with fsync off (the append protocol's cost); what a durable
// acknowledgement costs is measured in durability.bench.js. `run-agent bus post` fsyncs.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const msg = (i, name = 'bench') => ({ type: 'PROGRESS', project_id: 'bench-project', task_id: 'task-20260101-000000-bench', run_id: name, body: `${name} message ${i}` });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

async function singleWriter(lib, dir, { burst, total }) {
  const bus = path.join(dir, `single-${burst}.md`);
  // fsync off: these figures measure the append protocol (as before #31); the durable cost is in durability.bench.js
  const w = new lib.BusWriter(bus, { fsync: false });
  // Warm-up (opens the file, lets the JIT settle): steady-state throughput is what agents see.
  for (let i = 0; i < 20_000; i += burst) await Promise.all(Array.from({ length: burst }, (_, j) => w.append(msg(-1 - i - j))));
  const start = nowMs();
  for (let i = 0; i < total; i += burst) {
    if (burst === 1) await w.append(msg(i));
    else await Promise.all(Array.from({ length: burst }, (_, j) => w.append(msg(i + j))));
  }
  const seconds = (nowMs() - start) / 1000;
  w.close();
  return total / seconds;
}

/**
 * The floor under one awaited append (#15): the syscalls the append protocol cannot skip — take
 * the flock, lstat the path (rotation check), write, release — in a synchronous loop with a
 * pre-built entry of the same size, no message formatting, no promise.
 */
function appendSyscallCeiling(ctx, dir, total) {
  const { tryFlock, unflock } = require(path.join(ctx.root, 'dist', 'apps', 'cli', 'libs', 'storage', 'src', 'file-lock.js'));
  const bus = path.join(dir, 'ceiling.md');
  const entry = Buffer.from(`---\nmsg_id: MSG-20260101-000000-000000000-PID00001-0001\nts: 2026-01-01T00:00:00Z\ntype: PROGRESS\nproject_id: bench-project\ntask_id: task-20260101-000000-bench\nrun_id: bench\n---\nbench message 0\n`);
  const fd = fs.openSync(bus, 'a');
  const loop = (n) => {
    for (let i = 0; i < n; i++) {
      tryFlock(fd, 'ex');
      fs.lstatSync(bus);
      fs.writeSync(fd, entry);
      unflock(fd);
    }
  };
  loop(20_000);
  const start = nowMs();
  loop(total);
  const seconds = (nowMs() - start) / 1000;
  fs.closeSync(fd);
  return total / seconds;
}

async function multiProcess(ctx, dir, { writers, perWriter }) {
  const bus = path.join(dir, 'multi.md');
  fs.writeFileSync(bus, '');
  const writerJs = path.join(ctx.root, 'dist', 'apps', 'cli', 'libs', 'messagebus', 'src', 'writer.js');
  const script = path.join(dir, 'writer.js');
  fs.writeFileSync(
    script,
    `const { BusWriter } = require(${JSON.stringify(writerJs)});
     const [bus, name, count, startAt] = process.argv.slice(2);
     const m = (i) => ({ type: 'PROGRESS', project_id: 'bench-project', task_id: 't', run_id: name, body: name + ' message ' + i });
     (async () => {
       const w = new BusWriter(bus, { fsync: false });
       while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 1));
       const t0 = Date.now();
       for (let i = 0; i < Number(count); i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => w.append(m(i + j))));
       w.close();
       process.stdout.write(JSON.stringify({ t0, t1: Date.now() }));
     })();`,
  );
  const startAt = Date.now() + 1500; // every process is loaded before anyone starts
  const runs = await Promise.all(
    Array.from({ length: writers }, (_, k) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [script, bus, `w${k}`, String(perWriter), String(startAt)], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`writer exited ${code}`))));
      }),
    ),
  );
  const t0 = Math.min(...runs.map((r) => r.t0));
  const t1 = Math.max(...runs.map((r) => r.t1));
  const count = ctx.lib('messagebus').readMessages(bus).length;
  if (count !== writers * perWriter) throw new Error(`multi-process bench lost messages: ${count}`);
  return (writers * perWriter) / ((t1 - t0) / 1000);
}

async function sinceIdRead(lib, dir) {
  const bus = path.join(dir, 'big.md');
  const w = new lib.BusWriter(bus);
  const ids = [];
  for (let i = 0; i < 100_000; i += 1000) {
    const batch = await Promise.all(Array.from({ length: 1000 }, (_, j) => w.append(msg(i + j))));
    for (const m of batch) ids.push(m.msg_id);
  }
  w.close();
  const since = ids[ids.length - 11];
  const times = [];
  for (let i = 0; i < 30; i++) {
    const start = nowMs();
    const got = lib.readMessages(bus, { sinceId: since });
    times.push(nowMs() - start);
    if (got.length !== 10) throw new Error(`since read returned ${got.length}`);
  }
  const lastN = [];
  for (let i = 0; i < 30; i++) {
    const start = nowMs();
    lib.readMessages(bus, { last: 20 });
    lastN.push(nowMs() - start);
  }
  return { since: median(times), last: median(lastN), size: fs.statSync(bus).size };
}

// Issue #12: bodies up to 16 MiB are accepted; the tail reader must stay proportional to what it
// returns (20 × 1 MiB ≈ 20 MB read), not degrade with the file (100 × 1 MiB messages before them).
async function largeTailRead(lib, dir) {
  const bus = path.join(dir, 'large.md');
  const w = new lib.BusWriter(bus);
  const body = `${'ünïcødé report line, '.repeat(40)}\n`.repeat(1100); // ~1 MiB of UTF-8 with line breaks
  for (let i = 0; i < 120; i++) await w.append({ ...msg(i), body: `${i}\n${body}` });
  w.close();
  const times = [];
  for (let i = 0; i < 9; i++) {
    const start = nowMs();
    const got = lib.readMessages(bus, { last: 20 });
    times.push(nowMs() - start);
    if (got.length !== 20 || !got[19].body.startsWith('119\n')) throw new Error('large tail read returned the wrong messages');
  }
  return { ms: median(times), size: fs.statSync(bus).size, bodyBytes: Buffer.byteLength(body) };
}

function cliPost(ctx, dir) {
  const root = path.join(dir, 'runs');
  fs.mkdirSync(path.join(root, 'bench-project'), { recursive: true });
  const env = { ...process.env, HOME: dir };
  for (const k of Object.keys(env)) if (k.startsWith('JRUN_') || k === 'CONDUCTOR_ROOT' || k === 'RUN_AGENT_ROOT') delete env[k];
  const time = (cmd, args) => {
    const start = nowMs();
    execFileSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    return nowMs() - start;
  };
  const bare = [];
  const post = [];
  for (let i = 0; i < 15; i++) {
    bare.push(time(process.execPath, ['-e', '0']));
    post.push(time(ctx.bin('run-agent'), ['bus', 'post', '--root', root, '--project', 'bench-project', '--body', `cli ${i}`]));
  }
  return { bare: median(bare), post: median(post) };
}

module.exports.run = async function run(ctx) {
  const lib = ctx.lib('messagebus');
  const dir = ctx.tmpDir('bench-bus-');
  const sequential = await singleWriter(lib, dir, { burst: 1, total: 100_000 });
  const ceiling = appendSyscallCeiling(ctx, dir, 100_000);
  const coalesced = await singleWriter(lib, dir, { burst: 1000, total: 300_000 });
  const multi = await multiProcess(ctx, dir, { writers: 10, perWriter: 20_000 });
  const read = await sinceIdRead(lib, dir);
  const large = await largeTailRead(lib, dir);
  const cli = cliPost(ctx, dir);
  return [
    { name: 'bus append, 1 writer, same-tick bursts of 1000', value: coalesced, unit: 'msg/s', target: 100_000, better: 'higher' },
    { name: 'bus append, 1 writer, one awaited append at a time', value: sequential, unit: 'msg/s', target: Math.round(Math.min(100_000, ceiling / 2)), better: 'higher',
      note: `target = min(100k, the bare flock+lstat+write+unlock loop ÷ 2, the project's 2×-a-floor rule: ${Math.round(ceiling)}/s in the same run); ${(sequential / ceiling * 100).toFixed(0)} % of that floor` },
    { name: 'bus append, 10 writer processes (total)', value: multi, unit: 'msg/s', target: 70_000, better: 'higher', note: 'bursts of 100 per process' },
    { name: 'bus read since-id (last 10 of 100k messages)', value: read.since, unit: 'ms', target: 5, better: 'lower', note: `${(read.size / 1e6).toFixed(1)} MB file, median of 30` },
    { name: 'bus read last 20 (100k messages)', value: read.last, unit: 'ms', better: 'lower' },
    { name: 'bus tail-read of 20 × 1 MiB messages (120 in the file)', value: large.ms, unit: 'ms', better: 'lower', note: `${(large.size / 1e6).toFixed(0)} MB file, ${(large.bodyBytes / 1048576).toFixed(2)} MiB bodies, median of 9` },
    { name: 'run-agent bus post wall time', value: cli.post, unit: 'ms', better: 'lower', note: `node -e 0: ${cli.bare.toFixed(1)} ms` },
    { name: 'run-agent bus post / node -e 0', value: cli.post / cli.bare, unit: 'x', target: 2, better: 'lower', note: 'median of 15, interleaved' },
  ];
};
