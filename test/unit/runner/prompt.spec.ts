import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPrompt, PromptContext, RESTART_PREFIX } from '@app/runner';

const base = (root: string): PromptContext => ({
  root,
  taskDir: `${root}/p/task-20260101-000000-abc`,
  runDir: `${root}/p/task-20260101-000000-abc/runs/20260101-0000000000-1-1`,
  projectId: 'p',
  taskId: 'task-20260101-000000-abc',
  runId: '20260101-0000000000-1-1',
  messageBus: `${root}/p/task-20260101-000000-abc/TASK-MESSAGE-BUS.md`,
});

const EXPECTED = (root: string, extraEnv: string, docs: string, body: string): string =>
  `JRUN_TASK_FOLDER=${root}/p/task-20260101-000000-abc
JRUN_RUN_FOLDER=${root}/p/task-20260101-000000-abc/runs/20260101-0000000000-1-1
JRUN_PROJECT_ID=p
JRUN_TASK_ID=task-20260101-000000-abc
JRUN_ID=20260101-0000000000-1-1
${extraEnv}Write output.md to ${root}/p/task-20260101-000000-abc/runs/20260101-0000000000-1-1/output.md

## Message Bus
Report progress using:
  run-agent bus post --type PROGRESS --body "your message"
  run-agent bus post --type FACT --body "key result"
  run-agent bus post --type ERROR --body "what failed"
  run-agent bus post --type DECISION --body "what was decided"
Types: FACT, PROGRESS, DECISION, ERROR, QUESTION, INFO
The JRUN_MESSAGE_BUS env var is set; run-agent bus post uses it automatically.

## Sub-Agent Spawning (RLM Pattern)
For complex tasks, decompose using run-agent:
  run-agent job --project $JRUN_PROJECT_ID --task $JRUN_TASK_ID \\
    --parent-run-id $JRUN_ID --agent claude --prompt "sub-task description"
Run multiple sub-agents in PARALLEL for independent sub-tasks.
Use RLM (Recursive Language Model) decomposition:
  1. ASSESS context size and task complexity
  2. DECOMPOSE into independent sub-tasks at natural boundaries
  3. EXECUTE sub-agents in parallel
  4. SYNTHESIZE results
${docs}
## Completion
When done, create: ${root}/p/task-20260101-000000-abc/DONE
This signals the conductor loop to stop restarting this task.

---

${body}
`;

describe('prompt.md composition (runner-agents.md §2.3)', () => {
  let dir: string;
  let root: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prompt-'));
    root = join(dir, 'runs');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is byte-exact for a root run', () => {
    const bus = `${root}/p/task-20260101-000000-abc/TASK-MESSAGE-BUS.md`;
    expect(buildPrompt(base(root), '  do the thing \n')).toBe(EXPECTED(root, `JRUN_MESSAGE_BUS=${bus}\n`, '', 'do the thing'));
  });

  it('adds the parent and conductor URL lines, and the restart prefix after the separator', () => {
    const bus = `${root}/p/task-20260101-000000-abc/TASK-MESSAGE-BUS.md`;
    const text = buildPrompt({ ...base(root), parentRunId: 'PARENT', conductorUrl: 'http://127.0.0.1:14355' }, 'go', true);
    const env = `JRUN_PARENT_ID=PARENT\nJRUN_MESSAGE_BUS=${bus}\nJRUN_CONDUCTOR_URL=http://127.0.0.1:14355\n`;
    expect(text).toBe(EXPECTED(root, env, '', `${RESTART_PREFIX}go`));
    expect(RESTART_PREFIX).toBe('Continue working on the following:\n\n');
  });

  it('points at the methodology and AGENTS.md next to the runs root when they exist', () => {
    mkdirSync(join(dir, 'docs', 'workflow'), { recursive: true });
    writeFileSync(join(dir, 'docs', 'workflow', 'THE_PROMPT_v5_conductor.md'), 'm');
    writeFileSync(join(dir, 'AGENTS.md'), 'a');
    const bus = `${root}/p/task-20260101-000000-abc/TASK-MESSAGE-BUS.md`;
    const docs = `\n## Methodology\nRead ${dir}/docs/workflow/THE_PROMPT_v5_conductor.md for the full orchestration methodology.\nRead ${dir}/AGENTS.md for project conventions.\n`;
    expect(buildPrompt(base(root), 'x')).toBe(EXPECTED(root, `JRUN_MESSAGE_BUS=${bus}\n`, docs, 'x'));
  });
});
