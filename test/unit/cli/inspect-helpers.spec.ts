import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSizeBytes } from '../../../apps/cli/src/commands/engine/gc.command';
import { renderLines } from '@app/storage';
import { parseOutputFile } from '../../../apps/cli/src/commands/engine/output.command';
import { buildBlock, installBlock, uninstallBlock } from '@app/runner';
import { taskStatusFilter, type StatusRow } from '@app/runner';
import { compactPreview, formatAge, safeField } from '../../../apps/cli/src/commands/engine/support/activity';
import { inferScope } from '../../../apps/cli/src/commands/engine/support/scope';
import { formatTable } from '../../../apps/cli/src/commands/engine/support/table';
import { renderWatchPoll, watchPhase } from '../../../apps/cli/src/commands/engine/watch.command';
import { renderCommandLine } from '../../../apps/cli/src/commands/engine/wrap.command';

describe('inspection command helpers', () => {
  it('renderLines terminates every line, drops a CR and keeps the last N', () => {
    expect(renderLines('a\r\nb\nc', 0)).toBe('a\nb\nc\n');
    expect(renderLines('a\nb\nc\n', 2)).toBe('b\nc\n');
    expect(renderLines('', 3)).toBe('');
    expect(renderLines('\n\n', 0)).toBe('\n\n');
  });

  it('parseOutputFile accepts the four names case-insensitively', () => {
    expect(parseOutputFile(undefined)).toBe('output');
    expect(parseOutputFile('Prompt')).toBe('prompt');
    expect(() => parseOutputFile('log')).toThrow('unknown --file value "log": must be output, stdout, stderr, or prompt');
  });

  it('parseSizeBytes is 1024-based, takes the leading integer and rejects negatives', () => {
    expect(parseSizeBytes('10MB')).toBe(10 * 1024 * 1024);
    expect(parseSizeBytes('100kb')).toBe(102_400);
    expect(parseSizeBytes('1GB')).toBe(1024 ** 3);
    expect(parseSizeBytes('1.5MB')).toBe(1024 * 1024);
    expect(parseSizeBytes('512')).toBe(512);
    expect(parseSizeBytes('7B')).toBe(7);
    expect(() => parseSizeBytes('-1KB')).toThrow('size must be non-negative');
    expect(() => parseSizeBytes('MB')).toThrow('cannot parse number');
    expect(() => parseSizeBytes(' ')).toThrow('empty size string');
  });

  it('formats previews, ages and cells like upstream', () => {
    expect(compactPreview('  a \n\t b  ')).toBe('a b');
    expect(compactPreview('x'.repeat(100))).toBe(`${'x'.repeat(93)}...`);
    expect(compactPreview('é'.repeat(96))).toBe('é'.repeat(96));
    expect(formatAge(3725)).toBe('1h2m5s');
    expect(formatAge(null)).toBe('-');
    expect(safeField('  ')).toBe('-');
    expect(safeField('a\tb  c')).toBe('a b c');
  });

  it('formatTable pads all but the last column by two spaces', () => {
    expect(formatTable([['A', 'BB', 'C'], ['aaa', 'b', 'c']])).toBe('A    BB  C\naaa  b   c\n');
  });

  it('status filters map active, done, pending and plain statuses', () => {
    const row = (status: string, done = false): StatusRow => ({ task_id: 't', status, exit_code: null, latest_run: '', done, pid_alive: null });
    expect(taskStatusFilter('active')!(row('running'))).toBe(true);
    expect(taskStatusFilter('done')!(row('completed', true))).toBe(true);
    expect(taskStatusFilter('all_finished')!(row('completed'))).toBe(false);
    expect(taskStatusFilter('pending')!(row('-'))).toBe(true);
    expect(taskStatusFilter('failed')!(row('Failed'))).toBe(true);
  });

  it('watch phases and the poll text', () => {
    expect(['running', 'blocked', 'done', 'completed', 'failed', 'unknown'].map(watchPhase)).toEqual(['active', 'blocked', 'completed', 'completed', 'failed', 'pending']);
    const previous = new Map([['t1', 'active']]);
    const text = renderWatchPoll([{ task_id: 't1', status: 'running', elapsed: 61.9, done: false }], previous, false, 1_499);
    expect(text).toBe(
      '  phase counts: active=1 blocked=0 completed=0 failed=0 stopped=0 pending=0\n' +
        `  ${'t1'.padEnd(45)} [running  ] active    elapsed: 1m1.9s\n` +
        'Waiting for 1 active and 0 blocked task(s)... (timeout in 1s)\n',
    );
  });

  it('renderCommandLine quotes only words that need it', () => {
    expect(renderCommandLine('claude', ['-p', 'hello world', '', 'a$b', 'plain'])).toBe('claude -p "hello world" "" "a$b" plain');
  });

  it('shell blocks install idempotently and uninstall to the original text', () => {
    const block = buildBlock('run-agent');
    const installed = installBlock('a\n', block);
    expect(installed).toBe(`a\n\n${block}`);
    expect(installBlock(installed, block)).toBe(installed);
    expect(installBlock('', block)).toBe(block);
    expect(uninstallBlock(installed)).toBe('a\n');
    expect(uninstallBlock('a\n')).toBeUndefined();
    expect(installBlock(installed, buildBlock('ra'))).toContain("alias codex='ra wrap --agent codex --'");
  });

  describe('inferScope (D7)', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'scope-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('prefers flags, then JRUN_* variables, then the working directory', () => {
      const env = { JRUN_RUN_FOLDER: '/r/p1/task-20260101-000000-aaa/runs/run1', JRUN_PROJECT_ID: 'p2', JRUN_TASK_ID: 't2' };
      expect(inferScope({ project: 'x', task: 'y' }, { env, cwd: dir })).toEqual({ project: 'x', task: 'y' });
      expect(inferScope({}, { env, cwd: dir })).toEqual({ project: 'p1', task: 'task-20260101-000000-aaa' });
      expect(inferScope({}, { env: { JRUN_PROJECT_ID: 'p2', JRUN_TASK_ID: 't2' }, cwd: dir })).toEqual({ project: 'p2', task: 't2' });
      // A task from a source that names another project is not borrowed.
      expect(inferScope({ project: 'p3' }, { env: { JRUN_PROJECT_ID: 'p2', JRUN_TASK_ID: 't2' }, cwd: dir })).toEqual({ project: 'p3', task: undefined });
      const root = join(dir, 'runs');
      const taskDir = join(root, 'pp', 'task-20260101-000000-bbb');
      mkdirSync(taskDir, { recursive: true });
      expect(inferScope({}, { env: {}, cwd: taskDir, root })).toEqual({ project: 'pp', task: 'task-20260101-000000-bbb' });
      expect(inferScope({}, { env: {}, cwd: join(root, 'pp') })).toEqual({ project: 'pp', task: undefined });
      expect(inferScope({}, { env: {}, cwd: dir })).toEqual({ project: undefined, task: undefined });
    });
  });
});
