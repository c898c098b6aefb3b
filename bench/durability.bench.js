'use strict';
// Durable acknowledgements (issue #31): what the fsync before every acknowledgement costs.
//   an awaited bus append, fsync'd ≤ 2× the bare write+fsync floor of the same file system
//   (the project's 2×-a-floor rule, measured in the same run), reported next to the same append
//   without fsync; and `run-agent bus post` (which always fsyncs) with the bus file on the same disk.
const fs = require('node:fs');
const path = require('node:path');

const msg = (i) => ({ type: 'PROGRESS', project_id: 'bench-project', task_id: 'task-20260101-000000-bench', run_id: 'durable', body: `durable message ${i}` });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Median latencies (ms), interleaved so that both see the same disk: the floor (write one
 * entry-sized record and fsync it: no lock, no formatting) and one awaited append with fsync.
 */
async function durableVsFloor(lib, dir, n) {
  const fd = fs.openSync(path.join(dir, 'floor.md'), 'a');
  const record = Buffer.alloc(220, 0x61);
  const w = new lib.BusWriter(path.join(dir, 'durable.md'));
  const floor = [];
  const durable = [];
  for (let i = -20; i < n; i++) {
    let start = nowMs();
    fs.writeSync(fd, record);
    fs.fsyncSync(fd);
    if (i >= 0) floor.push(nowMs() - start);
    start = nowMs();
    await w.append(msg(i));
    if (i >= 0) durable.push(nowMs() - start);
  }
  fs.closeSync(fd);
  w.close();
  return { floor: median(floor), durable: median(durable) };
}

/** Median latency (ms) of one awaited append without fsync. */
async function volatileLatency(lib, dir, n) {
  const w = new lib.BusWriter(path.join(dir, 'volatile.md'), { fsync: false });
  const times = [];
  for (let i = -20; i < n; i++) {
    const start = nowMs();
    await w.append(msg(i));
    if (i >= 0) times.push(nowMs() - start);
  }
  w.close();
  return median(times);
}

/** Durable throughput with same-tick bursts (coalesced into one write and one fsync). */
async function burstThroughput(lib, dir, burst, total) {
  const w = new lib.BusWriter(path.join(dir, 'burst.md'));
  const start = nowMs();
  for (let i = 0; i < total; i += burst) await Promise.all(Array.from({ length: burst }, (_, j) => w.append(msg(i + j))));
  w.close();
  return total / ((nowMs() - start) / 1000);
}

module.exports.run = async function run(ctx) {
  const lib = ctx.lib('messagebus');
  const dir = ctx.tmpDir('bench-durable-');
  const n = 200;
  const { floor, durable } = await durableVsFloor(lib, dir, n);
  const volatile = await volatileLatency(lib, dir, n);
  const burst = await burstThroughput(lib, dir, 100, 20_000);
  return [
    { name: 'bus append latency, fsync\'d (durable acknowledgement)', value: durable, unit: 'ms', target: Number((2 * floor).toFixed(3)), better: 'lower',
      note: `target = 2 × the bare write+fsync floor of the same disk in this run (${floor.toFixed(3)} ms); median of ${n}, interleaved` },
    { name: 'bus append latency, no fsync (baseline, same run)', value: volatile, unit: 'ms', better: 'lower', note: `the fsync costs ${(durable - volatile).toFixed(3)} ms per acknowledgement (${(durable / Math.max(volatile, 1e-6)).toFixed(0)}×)` },
    { name: 'bus append, fsync\'d, same-tick bursts of 100', value: burst, unit: 'msg/s', better: 'higher', note: 'one write and one fsync per burst' },
  ];
};
