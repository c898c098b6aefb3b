'use strict';
// Capacity (issue #33): N concurrent root tasks with a fake agent holding 100 MB for 20 s (see
// capacity.js). CAPACITY_N (default 60), CAPACITY_AGENT_S (20), CAPACITY_AGENT_MB (100),
// CAPACITY_MIN_AVAILABLE (defaults.min_available_memory, e.g. 2GB; default unset). CAPACITY_N=0 skips.
// Runs three times: one runner process per task (the baseline), through the task supervisor, and
// POSTed to a conductor (informative).
const { spawnSync } = require('node:child_process');
const path = require('node:path');

function capacity(ctx, n, seconds, mb, mode) {
  const args = [path.join(__dirname, 'capacity.js'), ctx.root, ctx.tmpDir('bench-capacity-'), String(n), String(seconds), String(mb), mode];
  if (process.env.CAPACITY_MIN_AVAILABLE) args.push(process.env.CAPACITY_MIN_AVAILABLE);
  const out = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: (seconds * 6 + 120) * 1000, env: { ...process.env, RUN_AGENT_SUPERVISOR_IDLE_MS: '1000' } });
  if (out.status !== 0) throw new Error(`capacity bench (${mode}) failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

module.exports.run = async (ctx) => {
  const n = Number(process.env.CAPACITY_N ?? 60);
  if (!(n > 0)) return [];
  const seconds = Number(process.env.CAPACITY_AGENT_S ?? 20);
  const mb = Number(process.env.CAPACITY_AGENT_MB ?? 100);
  // the baseline: one runner process per task, the loop in each (RUN_AGENT_SUPERVISOR unset)
  const b = capacity(ctx, n, seconds, mb, 'runners');
  const r = capacity(ctx, n, seconds, mb, 'supervisor');
  // informative: the same tasks POSTed to a conductor (the loops in the server)
  const v = capacity(ctx, n, seconds, mb, 'server');
  const at = `${r.n} concurrent root tasks, ${mb} MB × ${seconds} s agents, RUN_AGENT_SUPERVISOR=1`;
  const perTask = (x, k, digits = 0) => `one runner per task: ${x[k].toFixed(digits)}`;
  return [
    { name: `capacity: start p50, submission → agent spawn (${at})`, value: r.p50, unit: 'ms', better: 'lower', note: `baseline: bare spawn of the same agent p50 ${r.bare.p50.toFixed(0)} ms; ${perTask(b, 'p50')} ms` },
    { name: `capacity: start p99 (${at})`, value: r.p99, unit: 'ms', target: 2000, better: 'lower', note: `baseline: bare spawn p99 ${r.bare.p99.toFixed(0)} ms; ${perTask(b, 'p99')} ms` },
    { name: 'capacity: our processes per concurrent agent, PSS (plateau; clients and supervisor)', value: r.pssPer, unit: 'MB', target: 15, better: 'lower', note: `total ${r.pssTotal.toFixed(0)} MB over ${r.sampled} processes; ${perTask(b, 'pssPer', 1)} MB; an idle node process PSS ${r.node.pss.toFixed(1)} MB` },
    { name: 'capacity: our processes per concurrent agent, RSS (plateau)', value: r.rssPer, unit: 'MB', better: 'lower', note: `total ${r.rssTotal.toFixed(0)} MB; ${perTask(b, 'rssPer', 1)} MB; an idle node process RSS ${r.node.rss.toFixed(1)} MB` },
    { name: 'capacity: our CPU per task until the plateau (clients and supervisor)', value: r.cpuStartMs, unit: 'ms', better: 'lower', note: `${perTask(b, 'cpuStartMs')} ms; × ${r.n} tasks on ${require('node:os').cpus().length} cores bounds the start latency` },
    { name: 'capacity: our CPU per task while the agents run', value: r.cpuPctPerRunner, unit: '% of a core', better: 'lower', note: `${perTask(b, 'cpuPctPerRunner', 2)} %` },
    { name: `capacity: through the server (POST /api/v1/tasks), start p99`, value: v.p99, unit: 'ms', better: 'lower', note: `p50 ${v.p50.toFixed(0)} ms; the server's PSS ${v.pssPer.toFixed(1)} MB and CPU ${v.cpuStartMs.toFixed(0)} ms per task; bare floor of this run p99 ${v.bare.p99.toFixed(0)} ms` },
    { name: 'capacity: queued by memory admission', value: r.queued, unit: 'tasks', better: 'lower', note: r.allStarted ? 'every agent was running at the plateau' : 'not every agent ran at once (admission or a slow start)' },
    { name: 'capacity: pages swapped out during the run (supervisor mode)', value: r.swapOutPages, unit: 'pages', target: 0, better: 'lower', note: `lowest MemAvailable ${r.minAvailableMb.toFixed(0)} MB (one runner per task: ${b.minAvailableMb.toFixed(0)} MB)` },
    { name: 'capacity: lost tasks (all three modes)', value: r.lost + b.lost + v.lost, unit: 'tasks', target: 0, better: 'lower', note: [...r.errors, ...b.errors, ...v.errors].join(' | ') || undefined },
    { name: 'capacity: doubled tasks (all three modes)', value: r.doubled + b.doubled + v.doubled, unit: 'tasks', target: 0, better: 'lower' },
  ];
};
