'use strict';
// Capacity, one tree of depth 4 with 200 children (issue #33; see capacity-tree.js).
// CAPACITY_TREE_AGENT_S (40), CAPACITY_TREE_AGENT_MB (20: 201 agents at once); CAPACITY_TREE=0 skips.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

module.exports.run = async (ctx) => {
  if (process.env.CAPACITY_TREE === '0') return [];
  const seconds = Number(process.env.CAPACITY_TREE_AGENT_S ?? 40);
  const mb = Number(process.env.CAPACITY_TREE_AGENT_MB ?? 20);
  const args = [path.join(__dirname, 'capacity-tree.js'), ctx.root, ctx.tmpDir('bench-capacity-tree-'), String(seconds), String(mb)];
  const out = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: (seconds * 6 + 180) * 1000 });
  if (out.status !== 0) throw new Error(`capacity tree bench failed: ${out.stderr}`);
  const r = JSON.parse(out.stdout);
  const at = `depth 4, 200 children, ${mb} MB × ${seconds} s agents`;
  return [
    { name: `capacity tree: child start p50, parent's \`job\` → child agent spawn (${at})`, value: r.p50, unit: 'ms', better: 'lower', note: `baseline: a bare node process spawned by the bench, p50 ${r.bare.toFixed(0)} ms` },
    { name: `capacity tree: child start p99 (${at})`, value: r.p99, unit: 'ms', target: 2000, better: 'lower', note: `baseline: bare node spawn p50 ${r.bare.toFixed(0)} ms` },
    { name: 'capacity tree: fill time, root submission → all 201 agents running', value: r.fillMs ?? NaN, unit: 'ms', better: 'lower', note: r.fillMs === undefined ? `only ${r.agents} agents ran at once within the window` : undefined },
    { name: 'capacity tree: our processes per concurrent agent, PSS (plateau)', value: r.pssPer, unit: 'MB', target: 15, better: 'lower', note: `total ${r.pssTotal.toFixed(0)} MB over ${r.sampled} runners (RSS ${r.rssPer.toFixed(1)} MB each)` },
    { name: 'capacity tree: lost agents', value: r.lost, unit: 'agents', target: 0, better: 'lower', note: r.error },
    { name: 'capacity tree: doubled agents', value: r.doubled, unit: 'agents', target: 0, better: 'lower' },
  ];
};
