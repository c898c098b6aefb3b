import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTaskSettings, scanRecords, taskRecordProblems, writeTaskSettings } from '@app/runner';
import { createStorageIndex } from '@app/storage';

describe('task record files that cannot be parsed (issue #29)', () => {
  let dir: string;
  let taskDir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'records-'));
    taskDir = join(dir, 'p', 'task-20260101-120000-abc');
    mkdirSync(join(taskDir, 'runs', 'run-1'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names each bad file with its kind; good and absent files are no problem', () => {
    expect(taskRecordProblems(taskDir)).toEqual([]);
    writeFileSync(join(taskDir, 'TASK-CONFIG.yaml'), 'depends_on: 7\n');
    writeFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'max_tokens: -3\n');
    writeFileSync(join(taskDir, 'WORKTREE.yaml'), 'path: 1\n');
    expect(taskRecordProblems(taskDir).map((p) => [p.kind, p.path])).toEqual([
      ['task-config', join(taskDir, 'TASK-CONFIG.yaml')],
      ['task-settings', join(taskDir, 'TASK-SETTINGS.yaml')],
      ['worktree', join(taskDir, 'WORKTREE.yaml')],
    ]);
    writeFileSync(join(taskDir, 'runs', 'run-1', 'run-info.yaml'), '[');
    expect(scanRecords(createStorageIndex(dir)).map((p) => p.kind)).toEqual(['task-config', 'task-settings', 'worktree', 'run-info']);
  });

  it('new settings never overwrite an unreadable settings file silently: it is renamed aside with a warning', () => {
    writeFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'max_tokens: [1\n');
    const warn = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      writeTaskSettings(taskDir, { max_tokens: 500 });
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^warning: read .*TASK-SETTINGS\.yaml: .*: kept as .*TASK-SETTINGS\.yaml\.corrupt-\d+, writing new settings\n$/));
    } finally {
      warn.mockRestore();
    }
    const aside = readdirSync(taskDir).filter((n) => n.startsWith('TASK-SETTINGS.yaml.corrupt-'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(taskDir, aside[0]), 'utf8')).toBe('max_tokens: [1\n');
    expect(readTaskSettings(taskDir)).toEqual({ max_tokens: 500 });
  });
});
