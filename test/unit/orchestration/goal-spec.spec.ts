import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildGoalSpec, encodeGoalSpec, goalFormatForPath, materializeGoalSpec, parseGoalSpec } from '@app/orchestration';
import { readDependsOn, readTaskPrompt, RunsLayout, TASK_ID_PATTERN } from '@app/storage';

const input = { projectId: 'demo', goal: 'Add a login page\nwith tests', env: {} };

describe('goal spec', () => {
  it('gives byte-identical YAML and JSON for the same input, and CRLF does not matter', () => {
    const a = buildGoalSpec(input);
    const b = buildGoalSpec({ ...input, goal: '  Add a login page\r\nwith tests\r\n' });
    expect(encodeGoalSpec(a, 'yaml')).toBe(encodeGoalSpec(b, 'yaml'));
    expect(encodeGoalSpec(a, 'json')).toBe(encodeGoalSpec(buildGoalSpec(input), 'json'));
    expect(JSON.parse(encodeGoalSpec(a, 'json'))).toEqual(parse(encodeGoalSpec(a, 'yaml')));
  });

  it('changes ids when the goal changes', () => {
    const a = buildGoalSpec(input);
    const b = buildGoalSpec({ ...input, goal: 'Something else' });
    expect(a.workflow_id).not.toBe(b.workflow_id);
    expect(a.tasks[0].task_id).not.toBe(b.tasks[0].task_id);
  });

  it('has eight valid task ids and a DAG that only points backwards', () => {
    const spec = buildGoalSpec(input);
    expect(spec.workflow_id).toMatch(/^workflow-demo-[0-9a-f]{12}$/);
    expect(spec.tasks.map((t) => t.task_id.replace(/^task-\d{8}-\d{6}-/, ''))).toEqual([
      '01-assess-context',
      '02-decompose-plan',
      '03-implement-changes',
      '04-run-tests',
      '05-review-claude',
      '06-review-gemini',
      '07-synthesize-results',
      '08-verify-completeness',
    ]);
    spec.tasks.forEach((t, i) => {
      expect(t.task_id).toMatch(TASK_ID_PATTERN);
      for (const dep of t.depends_on ?? []) expect(spec.tasks.findIndex((x) => x.task_id === dep)).toBeLessThan(i);
    });
    expect(spec.tasks[0].depends_on).toBeUndefined();
    expect(spec.tasks[6].depends_on).toEqual([spec.tasks[3].task_id, spec.tasks[4].task_id, spec.tasks[5].task_id]);
    expect(spec.goal).toEqual({ mode: 'inline', digest_sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: 27, preview: 'Add a login page' });
  });

  it('cuts long previews and honours the RLM document override', () => {
    const spec = buildGoalSpec({ ...input, goal: 'x'.repeat(200), env: { CONDUCTOR_RLM_SEMANTICS_DOC: 'docs//RLM.md' } });
    expect(spec.goal.preview).toBe(`${'x'.repeat(117)}...`);
    expect(spec.semantics.rlm_document).toBe('docs/RLM.md');
  });

  it('rejects bad input with clear messages', () => {
    expect(() => buildGoalSpec({ ...input, goal: '  \n ' })).toThrow('goal is required');
    expect(() => buildGoalSpec({ ...input, strategy: 'waterfall' })).toThrow('unsupported strategy "waterfall"');
    expect(() => buildGoalSpec({ ...input, maxParallel: 17 })).toThrow('max parallel 17 exceeds limit 16');
    expect(buildGoalSpec({ ...input, maxParallel: -3 }).max_parallel).toBe(6);
  });

  it('picks the format from the file extension', () => {
    expect(goalFormatForPath('a/spec.JSON')).toBe('json');
    expect(goalFormatForPath('spec.yaml')).toBe('yaml');
    expect(goalFormatForPath('spec')).toBe('yaml');
  });

  describe('materialize', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'goal-spec-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('creates TASK.md and TASK-CONFIG.yaml depends_on for every task, keeping existing prompts', () => {
      const spec = parseGoalSpec(encodeGoalSpec(buildGoalSpec(input), 'yaml'));
      const created = materializeGoalSpec(new RunsLayout(dir), spec, input.goal);
      expect(created.every((t) => t.created)).toBe(true);
      for (const t of spec.tasks) {
        const taskDir = join(dir, 'demo', t.task_id);
        expect(readDependsOn(taskDir)).toEqual(t.depends_on ?? []);
        expect(readTaskPrompt(taskDir)).toContain('Add a login page\nwith tests');
        expect(readTaskPrompt(taskDir)).toContain(`# ${t.title}`);
        expect(existsSync(join(dir, 'demo', t.prompt_file))).toBe(true);
      }
      const again = materializeGoalSpec(new RunsLayout(dir), spec, input.goal);
      expect(again.some((t) => t.created)).toBe(false);
    });

    it('refuses a goal text that does not match the digest and writes nothing', () => {
      const spec = buildGoalSpec(input);
      expect(() => materializeGoalSpec(new RunsLayout(dir), spec, 'another goal')).toThrow('does not match the spec');
      expect(existsSync(join(dir, 'demo'))).toBe(false);
    });

    it('rejects specs with unknown dependencies or bad ids', () => {
      const spec = buildGoalSpec(input);
      const broken = { ...spec, tasks: [{ ...spec.tasks[1] }] };
      expect(() => parseGoalSpec(JSON.stringify(broken), 's.json')).toThrow(/depends on unknown task/);
      const badId = { ...spec, tasks: [{ ...spec.tasks[0], task_id: '../x' }] };
      expect(() => parseGoalSpec(JSON.stringify(badId), 's.json')).toThrow(/invalid task ID/);
      expect(() => parseGoalSpec('schema_version: other\n', 's.yaml')).toThrow('schema_version must be "goal-workflow/v1"');
    });
  });
});
