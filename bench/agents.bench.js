'use strict';
// Agent-layer figures: stream parser throughput over large stdout files (the runner parses
// agent-stdout.txt after every run) and the cost of one fake-agent process round trip.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const TARGET_MB = 32;

function claudeStream(bytes) {
  const lines = [JSON.stringify({ type: 'system', subtype: 'init', session_id: 's' })];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const tool = JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'x'.repeat(64 * 1024) }] } });
    const text = JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: `step ${i} done` }] } });
    lines.push(tool, text);
    size += tool.length + text.length;
  }
  lines.push(JSON.stringify({ type: 'result', is_error: false, result: 'final answer' }));
  return lines.join('\n') + '\n';
}

function codexStream(bytes) {
  const lines = [JSON.stringify({ type: 'thread.started', thread_id: 't' })];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const cmd = JSON.stringify({ type: 'item.completed', item: { id: `c${i}`, type: 'command_execution', command: 'cat big', aggregated_output: 'y'.repeat(64 * 1024), exit_code: 0, status: 'completed' } });
    const msg = JSON.stringify({ type: 'item.completed', item: { id: `m${i}`, type: 'agent_message', text: `message ${i}` } });
    lines.push(cmd, msg);
    size += cmd.length + msg.length;
  }
  return lines.join('\n') + '\n';
}

function geminiStream(bytes) {
  const lines = [JSON.stringify({ type: 'init', session_id: 's' })];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const res = JSON.stringify({ type: 'tool_result', tool_id: `t${i}`, status: 'success', output: 'z'.repeat(64 * 1024) });
    const delta = JSON.stringify({ type: 'message', role: 'assistant', content: ` chunk ${i}`, delta: true });
    lines.push(res, delta);
    size += res.length + delta.length;
  }
  lines.push(JSON.stringify({ type: 'result', status: 'success', stats: {} }));
  return lines.join('\n') + '\n';
}

function timeIt(fn, reps) {
  fn(); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e6 / reps;
}

module.exports.run = async function run(ctx) {
  const agents = ctx.lib('agents');
  const dir = ctx.tmpDir('bench-agents-');
  const figures = [];
  const cases = [
    ['claude', claudeStream, agents.parseClaudeStream, 'final answer'],
    ['codex', codexStream, agents.parseCodexStream, undefined],
    ['gemini', geminiStream, agents.parseGeminiStream, undefined],
  ];
  for (const [name, make, parse, expected] of cases) {
    const file = path.join(dir, `${name}.jsonl`);
    fs.writeFileSync(file, make(TARGET_MB * 1024 * 1024));
    const mb = fs.statSync(file).size / (1024 * 1024);
    let result;
    const ms = timeIt(() => (result = parse(agents.readFileLines(file))), 3);
    if (expected !== undefined && result !== expected) throw new Error(`${name} parser returned ${JSON.stringify(result)}`);
    figures.push({ name: `${name} stream parse (${Math.round(mb)} MB stdout file)`, value: mb / (ms / 1000), unit: 'MB/s', target: 100, better: 'higher' });
  }

  const bin = path.join(ctx.root, 'test', 'fixtures', 'agents');
  const promptFile = path.join(dir, 'prompt.md');
  fs.writeFileSync(promptFile, 'bench prompt\n');
  const args = ['-p', '--input-format', 'text', '--output-format', 'stream-json', '--verbose', '--tools', 'default', '--permission-mode', 'bypassPermissions'];
  const roundTrip = timeIt(() => {
    const r = spawnSync(path.join(bin, 'claude'), args, { input: fs.readFileSync(promptFile), env: { ...process.env, FAKE_AGENT_TEXT: 'ok' } });
    if (r.status !== 0) throw new Error(`fake claude failed: ${r.stderr}`);
  }, 5);
  figures.push({ name: 'fake claude process round trip', value: roundTrip, unit: 'ms', better: 'lower', note: 'test-harness overhead per fake agent run' });
  return figures;
};
