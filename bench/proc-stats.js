'use strict';
// Shared by the capacity and CLI benches: a process's memory from /proc, percentiles, the task supervisors.
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

/** The task supervisors (bin/task-supervisor.js) serving sockets under `runtimeDir`, found by their command line. */
function supervisors(runtimeDir) {
  return fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      return argv.some((a) => a.endsWith('task-supervisor.js')) && argv.some((a) => a.startsWith(runtimeDir));
    } catch {
      return false;
    }
  }).map(Number);
}

module.exports = { rollup, pct, supervisors };
