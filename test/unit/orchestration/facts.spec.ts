import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusWriter } from '@app/messagebus';
import { existingFactHashes, factHash, promoteFacts } from '@app/orchestration';
import { RunsLayout } from '@app/storage';

const P = 'proj';
const T1 = 'task-20260101-000000-one';
const T2 = 'task-20260101-000000-two';

describe('facts promote', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'facts-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  async function post(task: string, type: string, body: string, ts = new Date('2026-01-01T10:00:00Z')): Promise<void> {
    mkdirSync(join(root, P, task), { recursive: true });
    const w = new BusWriter(join(root, P, task, 'TASK-MESSAGE-BUS.md'));
    await w.append({ type, project_id: P, task_id: task, run_id: 'r1', body, ts });
    w.close();
  }

  it('promotes each fact once across two runs, multi-line bodies included', async () => {
    await post(T1, 'FACT', 'API uses port 14355');
    await post(T1, 'FACT', 'multi-line fact\n\nsecond paragraph\n- **Source task**: not a field');
    await post(T2, 'FACT', 'API uses port 14355');
    await post(T2, 'PROGRESS', 'not a fact');
    const first = await promoteFacts({ layout: new RunsLayout(root), projectId: P, now: new Date('2026-01-02T00:00:00Z') });
    expect(first.promoted.map((f) => f.body)).toEqual(['API uses port 14355', 'multi-line fact\n\nsecond paragraph\n- **Source task**: not a field']);
    expect(first.alreadyPresent).toBe(0);
    const text = readFileSync(first.path, 'utf8');
    expect(text.startsWith('# Project Facts: proj\nLast updated: 2026-01-02T00:00:00Z\n\n---\n## Fact: API uses port 14355\n')).toBe(true);
    expect(text).toContain('## Fact: multi-line fact\n- **Body**: multi-line fact\n  \n  second paragraph\n  - **Source task**: not a field\n');

    await post(T2, 'fact', 'new one\nwith two lines');
    const second = await promoteFacts({ layout: new RunsLayout(root), projectId: P, now: new Date('2026-01-03T00:00:00Z') });
    expect(second.promoted.map((f) => f.body)).toEqual(['new one\nwith two lines']);
    expect(second.alreadyPresent).toBe(3);
    const after = readFileSync(first.path, 'utf8');
    expect(after).toContain('Last updated: 2026-01-03T00:00:00Z\n');
    expect(after.match(/^## Fact: /gm)).toHaveLength(3);

    const third = await promoteFacts({ layout: new RunsLayout(root), projectId: P });
    expect(third).toMatchObject({ promoted: [], alreadyPresent: 4, written: false });
    expect(readFileSync(first.path, 'utf8')).toBe(after);
  });

  it('recognises single-line facts written in the upstream format', async () => {
    mkdirSync(join(root, P), { recursive: true });
    writeFileSync(join(root, P, 'PROJECT-FACTS.md'), '# Project Facts: proj\nLast updated: 2025-01-01T00:00:00Z\n\n---\n## Fact: old\n- **Body**: old\n- **Source task**: x\n---\n');
    await post(T1, 'FACT', 'old');
    const r = await promoteFacts({ layout: new RunsLayout(root), projectId: P });
    expect(r).toMatchObject({ promoted: [], alreadyPresent: 1 });
    expect(existingFactHashes('- **Body**: a\n  b\n- **Source task**: t\n').has(factHash('a\nb'))).toBe(true);
  });

  it('dry-run writes nothing; --since and the type filter select messages', async () => {
    await post(T1, 'FACT', 'old fact', new Date('2025-06-01T00:00:00Z'));
    await post(T1, 'FACT', 'new fact', new Date('2026-06-01T00:00:00Z'));
    await post(T1, 'DECISION', 'a decision', new Date('2026-06-01T00:00:00Z'));
    const dry = await promoteFacts({ layout: new RunsLayout(root), projectId: P, dryRun: true, since: new Date('2026-01-01T00:00:00Z') });
    expect(dry.promoted.map((f) => f.body)).toEqual(['new fact']);
    expect(existsSync(dry.path)).toBe(false);
    const decisions = await promoteFacts({ layout: new RunsLayout(root), projectId: P, filterType: 'decision' });
    expect(decisions.promoted.map((f) => f.body)).toEqual(['a decision']);
  });

  it('rejects an invalid project id and handles a missing project', async () => {
    await expect(promoteFacts({ layout: new RunsLayout(root), projectId: '../x' })).rejects.toThrow(/invalid project ID/);
    await expect(promoteFacts({ layout: new RunsLayout(root), projectId: 'absent' })).resolves.toMatchObject({ promoted: [], written: false });
  });
});
