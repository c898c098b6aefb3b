'use strict';
/* global fetch, AbortController, TextDecoder */
// Shared timing plumbing of the bench files (not a bench itself: run.js loads only *.bench.js).

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Milliseconds since `t0` (a process.hrtime.bigint() reading). */
const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The p-th percentile (nearest rank). */
function pct(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** Polls `fn` until it returns a truthy value and resolves with it; throws naming `what` after the deadline. */
async function waitFor(what, fn, timeoutMs = 60000, intervalMs = 20) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Opens an SSE stream and calls `onEvent(block, arrivedAt)` for each event block as it arrives
 * (arrivedAt: process.hrtime.bigint()). Resolves once the response headers are in; `close()` aborts.
 */
async function followSse(url, onEvent) {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  (async () => {
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        const blocks = buf.split('\n\n');
        buf = blocks.pop();
        const at = process.hrtime.bigint();
        for (const b of blocks) onEvent(b, at);
      }
    } catch {
      /* aborted */
    }
  })();
  return { close: () => controller.abort() };
}

/** One GET, body read; a non-2xx answer is an error (a bench must not time error pages). */
async function get(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  await res.arrayBuffer();
}

/** Median wall time of `n` sequential GETs of `url`. */
async function medianLatency(url, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await get(url);
    times.push(msSince(t0));
  }
  return median(times);
}

/** Requests per second with `inFlight` concurrent GET loops for `ms` milliseconds. */
async function throughput(url, inFlight, ms) {
  let done = 0;
  const end = Date.now() + ms;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (Date.now() < end) {
      await get(url);
      done++;
    }
  }));
  return done / (ms / 1000);
}

/** A `/proc/<pid>/status` memory field (VmRSS, VmHWM …) in MB. */
function procStatusMb(pid, field) {
  const m = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return Number(m[1]) / 1024;
}

module.exports = { followSse, median, medianLatency, msSince, pct, procStatusMb, sleep, throughput, waitFor };
