import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages, serializeEntry } from '@app/messagebus';
import { loadConfig, parseRunInfo, serializeRunInfo } from '@app/storage';
import { parse as parseYaml } from 'yaml';
import { parsePlannerState, serializePlannerState } from '@app/planner';

/**
 * Files written by the upstream Go binary (see test/fixtures/upstream/README.md): we must read them
 * as upstream does, and where the byte layout is the contract (run-info.yaml, bus entries, planner
 * state) our writer must produce the same bytes. Known, documented difference: we keep
 * millisecond time precision, so nanosecond timestamps are compared truncated to milliseconds.
 */
const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'upstream');
const RUNS = join(FIXTURES, 'runs');
const PROJECT = 'golden';

/** Go RFC3339Nano truncated to milliseconds (trailing zeros dropped, like Go does). */
function toMillis(text: string): string {
  return text.replace(/(\d{2}:\d{2}:\d{2})\.(\d+)Z/g, (_m, hms: string, frac: string) => {
    const ms = frac.slice(0, 3).replace(/0+$/, '');
    return ms ? `${hms}.${ms}Z` : `${hms}Z`;
  });
}

function runInfoPath(task: string): string {
  const runsDir = join(RUNS, PROJECT, task, 'runs');
  const [run] = readdirSync(runsDir);
  return join(runsDir, run, 'run-info.yaml');
}

describe('upstream golden files: run-info.yaml', () => {
  const cases: Array<{ file: () => string; status: string; exit: number; agent: string; errorSummary?: string; ended: boolean }> = [
    { file: () => runInfoPath('task-20260101-120000-completed'), status: 'completed', exit: 0, agent: 'claude', ended: true },
    { file: () => runInfoPath('task-20260101-120000-failed'), status: 'failed', exit: 3, agent: 'codex', errorSummary: 'agent exited with code 3', ended: true },
    { file: () => runInfoPath('task-20260101-120000-stopped'), status: 'failed', exit: -1, agent: 'claude', errorSummary: 'agent exited with code -1', ended: true },
    { file: () => join(FIXTURES, 'running-run-info.yaml'), status: 'running', exit: -1, agent: 'claude', ended: false },
  ];

  it.each(cases)('reads the $status run (exit $exit) as upstream wrote it', ({ file, status, exit, agent, errorSummary, ended }) => {
    const text = readFileSync(file(), 'utf8');
    const info = parseRunInfo(text, file());
    expect(info.version).toBe(1);
    expect(info.status).toBe(status);
    expect(info.exit_code).toBe(exit);
    expect(info.agent).toBe(agent);
    expect(info.project_id).toBe(PROJECT);
    expect(info.process_ownership).toBe('managed');
    expect(info.pid).toBeGreaterThan(0);
    expect(info.pgid).toBe(info.pid);
    expect(info.error_summary ?? '').toBe(errorSummary ?? '');
    expect(info.start_time.getTime()).toBe(Date.parse(/start_time: (\S+)/.exec(toMillis(text))![1]));
    expect(info.end_time.getUTCFullYear() > 1).toBe(ended);
    expect(info.commandline).toContain(`${agent} `);
    expect(info.stdout_path).toMatch(/\/agent-stdout\.txt$/);
  });

  it.each(cases)('writes the $status run byte-identical to upstream (times at ms precision)', ({ file }) => {
    const text = readFileSync(file(), 'utf8');
    expect(serializeRunInfo(parseRunInfo(text, file()))).toBe(toMillis(text));
  });
});

describe('upstream golden files: message bus', () => {
  const projectBus = join(RUNS, PROJECT, 'PROJECT-MESSAGE-BUS.md');
  /** What upstream's own server returned for this file (GET /api/v1/messages?project_id=golden). */
  const upstreamRead = JSON.parse(readFileSync(join(FIXTURES, 'project-bus.upstream-read.json'), 'utf8')).messages as Array<{
    msg_id: string;
    type: string;
    body: string;
  }>;

  it('reads every entry upstream reads, with the same ids, types and bodies (modulo the one trailing newline)', () => {
    const ours = readMessages(projectBus);
    expect(ours.map((m) => m.msg_id)).toEqual(upstreamRead.map((m) => m.msg_id));
    expect(ours.map((m) => m.type)).toEqual(upstreamRead.map((m) => m.type));
    // Upstream keeps the separator newline on non-final bodies; we strip exactly one (D9).
    expect(ours.map((m) => m.body)).toEqual(upstreamRead.map((m, i) => (i < upstreamRead.length - 1 ? m.body.replace(/\n$/, '') : m.body)));
  });

  it('keeps the tricky bodies: unicode, tabs and indentation, CRLF, YAML-looking text', () => {
    const byBody = readMessages(projectBus).map((m) => m.body);
    expect(byBody).toContain('unicode: café ✓ 🚀 日本');
    expect(byBody).toContain('  indented\ttab\n    code block\ntrailing spaces   ');
    expect(byBody).toContain('windows\r\nline\r\nendings');
    expect(byBody).toContain('from stdin\nwith: colon: yaml-ish\n- list item');
    expect(byBody).toContain('line one\nline two\n\nafter blank');
  });

  it('writes each entry byte-identical to upstream, given the body our reader decodes', () => {
    const text = readFileSync(projectBus, 'utf8');
    const chunks = text.split(/(?=^---\nmsg_id: MSG-\d)/m);
    expect(chunks).toHaveLength(8);
    let compared = 0;
    for (const chunk of chunks) {
      const msgId = /^msg_id: (\S+)$/m.exec(chunk)![1];
      const up = upstreamRead.find((m) => m.msg_id === msgId)!;
      const m = readMessages(projectBus).find((x) => x.msg_id === msgId)!;
      const header = { msgId, tsText: /^ts: (\S+)$/m.exec(chunk)![1], type: m.type, projectId: m.project_id, taskId: m.task_id, runId: m.run_id };
      // A bare `---` body line is escaped by us (D9) and split by upstream's reader: not comparable.
      if (/^---$/m.test(chunk.slice(chunk.indexOf('---\n', 4) + 4))) continue;
      expect(up).toBeDefined();
      // Every body here ends without a newline or in a blank line: upstream's writer and ours agree.
      expect(serializeEntry(header, m.body) + (chunk.endsWith('\n\n') ? '\n' : '')).toBe(chunk);
      compared++;
    }
    expect(compared).toBe(6);
  });

  it('reads the task bus upstream wrote for a run (RUN_START / RUN_STOP)', () => {
    const types = readMessages(join(RUNS, PROJECT, 'task-20260101-120000-completed', 'TASK-MESSAGE-BUS.md')).map((m) => m.type);
    expect(types).toEqual(expect.arrayContaining(['RUN_START', 'RUN_STOP', 'DECISION']));
    const failed = readMessages(join(RUNS, PROJECT, 'task-20260101-120000-failed', 'TASK-MESSAGE-BUS.md')).map((m) => m.type);
    expect(failed).toEqual(expect.arrayContaining(['RUN_START', 'RUN_CRASH']));
  });
});

describe('upstream golden files: root-task planner state', () => {
  const text = readFileSync(join(FIXTURES, 'planner', 'root-task-planner.yaml'), 'utf8');

  it('reads one running and two queued entries in submission order', () => {
    const state = parsePlannerState(text, 1);
    expect(state.limit).toBe(1);
    expect(state.nextOrder).toBe(4);
    expect(state.entries.map((e) => [e.taskId, e.state, e.order])).toEqual([
      ['task-20260101-120000-first', 'running', 1],
      ['task-20260101-120000-second', 'queued', 2],
      ['task-20260101-120000-third', 'queued', 3],
    ]);
    expect(state.entries[1].request).toMatchObject({ project_id: PROJECT, agent_type: 'claude', prompt: 'queued second', attach_mode: 'create' });
    expect(state.entries[0].startedAt).toBeInstanceOf(Date);
    expect(state.entries[1].startedAt).toBeUndefined();
  });

  // Upstream reads the file with a YAML parser, so the document (not the indentation) is the
  // contract here: yaml.v3 indents nested blocks under a sequence item by 4, we write 6.
  it('writes it back as the same YAML document (times at ms precision)', () => {
    expect(parseYaml(serializePlannerState(parsePlannerState(text, 1)))).toEqual(parseYaml(toMillis(text)));
  });
});

describe('upstream golden files: config files', () => {
  const configs = readdirSync(join(FIXTURES, 'config')).filter((f) => f.endsWith('.yaml'));

  it('has the checked-in upstream examples', () => {
    expect(configs.sort()).toEqual(['config.basic.yaml', 'config.development.yaml', 'config.docker.yaml', 'config.golden-job.yaml', 'config.multi-agent.yaml', 'config.production.yaml']);
  });

  const expected: Record<string, { agents: string[]; agent: string; timeout: number; host?: string }> = {
    'config.basic.yaml': { agents: ['codex'], agent: 'codex', timeout: 300 },
    'config.development.yaml': { agents: ['claude', 'codex', 'gemini'], agent: 'codex', timeout: 120, host: 'localhost' },
    'config.docker.yaml': { agents: ['claude', 'codex'], agent: 'claude', timeout: 600, host: '0.0.0.0' },
    'config.golden-job.yaml': { agents: ['claude', 'codex'], agent: 'claude', timeout: 300 },
    'config.multi-agent.yaml': { agents: ['claude', 'codex', 'gemini', 'perplexity', 'xai'], agent: 'claude', timeout: 300, host: 'localhost' },
    'config.production.yaml': { agents: ['claude', 'codex', 'gemini'], agent: 'claude', timeout: 600, host: '0.0.0.0' },
  };

  it.each(configs)('loads %s with the agents and defaults upstream sees', (name) => {
    // Lenient, as the server and `validate` read it: the token files named there do not exist here.
    const cfg = loadConfig(join(FIXTURES, 'config', name), { strict: false });
    const want = expected[name];
    expect(Object.keys(cfg.agents ?? {}).sort()).toEqual(want.agents);
    for (const agent of want.agents) expect(cfg.agents[agent].type).toBe(agent);
    expect(cfg.defaults?.agent).toBe(want.agent);
    expect(cfg.defaults?.timeout).toBe(want.timeout);
    if (want.host) expect(cfg.api?.host).toBe(want.host);
    else expect(readFileSync(join(FIXTURES, 'config', name), 'utf8')).not.toMatch(/^api:/m);
  });
});
