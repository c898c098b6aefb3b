'use strict';
// Capacity, one tree of depth 4 with 200 children (issue #33; see capacity-tree.js).
// CAPACITY_TREE_AGENT_S (40), CAPACITY_TREE_AGENT_MB (20: 201 agents at once); CAPACITY_TREE=0 skips.
// Runs three times: the floor (the agents starting each other directly, no run-agent), one runner
// process per agent (the baseline), then through the task supervisor.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

function tree(ctx, seconds, mb, mode) {
  const args = [path.join(__dirname, 'capacity-tree.js'), ctx.root, ctx.tmpDir('bench-capacity-tree-'), String(seconds), String(mb), mode];
  const out = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: (seconds * 6 + 180) * 1000, env: { ...process.env, RUN_AGENT_SUPERVISOR_IDLE_MS: '1000' } });
  if (out.status !== 0) throw new Error(`capacity tree bench (${mode}) failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

module.exports.run = async (ctx) => {
  if (process.env.CAPACITY_TREE === '0') return [];
  const seconds = Number(process.env.CAPACITY_TREE_AGENT_S ?? 40);
  const mb = Number(process.env.CAPACITY_TREE_AGENT_MB ?? 20);
  const floor = tree(ctx, seconds, mb, 'bare');
  const b = tree(ctx, seconds, mb, 'runners');
  const r = tree(ctx, seconds, mb, 'supervisor');
  const at = `depth 4, 200 children, ${mb} MB × ${seconds} s agents, RUN_AGENT_SUPERVISOR=1`;
  const perAgent = (k, digits = 0) => `one runner per agent: ${b[k] === undefined ? 'n/a' : b[k].toFixed(digits)}`;
  return [
    { name: `capacity tree: child start p50, parent's \`job\` → child agent spawn (${at})`, value: r.p50, unit: 'ms', better: 'lower', note: `baseline: a bare node process spawned by the bench, p50 ${r.bare.toFixed(0)} ms; ${perAgent('p50')} ms` },
    { name: `capacity tree: child start p99 (${at})`, value: r.p99, unit: 'ms', target: 2000, better: 'lower', note: `${perAgent('p99')} ms; floor (the agents starting each other directly) ${floor.p99.toFixed(0)} ms: the 201 agents are node processes too, started on ${require('node:os').cpus().length} cores` },
    { name: 'capacity tree: fill time, root submission → all 201 agents running', value: r.fillMs ?? NaN, unit: 'ms', better: 'lower', note: r.fillMs === undefined ? `only ${r.agents} agents ran at once within the window` : `${perAgent('fillMs')} ms; floor ${floor.fillMs === undefined ? 'n/a' : floor.fillMs.toFixed(0)} ms` },
    { name: 'capacity tree: our processes per concurrent agent, PSS (plateau; clients and supervisors)', value: r.pssPer, unit: 'MB', target: 15, better: 'lower', note: `total ${r.pssTotal.toFixed(0)} MB over ${r.sampled} processes (RSS ${r.rssPer.toFixed(1)} MB each); ${perAgent('pssPer', 1)} MB` },
    { name: 'capacity tree: lost agents (all three runs)', value: r.lost + b.lost + floor.lost, unit: 'agents', target: 0, better: 'lower', note: [r.error, b.error, floor.error].filter(Boolean).join(' | ') || undefined },
    { name: 'capacity tree: doubled agents (all three runs)', value: r.doubled + b.doubled + floor.doubled, unit: 'agents', target: 0, better: 'lower' },
  ];
};
