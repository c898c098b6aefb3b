'use strict';
// Shared by the capacity benches: a process's memory from /proc and percentiles.
const fs = require('node:fs');

/** Rss and Pss of a process in MB (/proc/<pid>/smaps_rollup), undefined once it ended. */
function rollup(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { rss: kb('Rss') / 1024, pss: kb('Pss') / 1024 };
  } catch {
    return undefined;
  }
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

module.exports = { rollup, pct };
