import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTaskSettings, validateDoneCriteria, validateTaskSettings, writeTaskSettings } from '@app/runner';
import { decodeQueuedTask } from '@app/scaleout';

describe('done_criteria settings (issue #33)', () => {
  it('the one validator takes strings and {command, timeout}, trims, and bounds count, length and timeouts', () => {
    expect(validateDoneCriteria([' npm test ', { command: 'node --test', timeout: '90s' }])).toEqual([{ command: 'npm test' }, { command: 'node --test', timeout_ms: 90_000 }]);
    expect(() => validateDoneCriteria('npm test')).toThrow('done_criteria must be a list of commands');
    expect(() => validateDoneCriteria([3])).toThrow('done criterion 1 must be a command string, got 3');
    expect(() => validateDoneCriteria(['x'.repeat(4097)])).toThrow('longer than 4096 characters');
    expect(() => validateDoneCriteria(['a\0b'])).toThrow('NUL');
    expect(() => validateDoneCriteria(Array.from({ length: 21 }, () => 'true'))).toThrow('at most 20');
    expect(() => validateDoneCriteria([{ command: 'true', timeout: '25h' }])).toThrow('between 1s and 24h');
    expect(() => validateTaskSettings({ done_criteria: ['true'], done_criteria_timeout: '500ms' })).toThrow('between 1s and 24h');
  });

  it('TASK-SETTINGS.yaml keeps criteria next to the budget, and a merge keeps both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'criteria-settings-'));
    try {
      writeTaskSettings(dir, { max_tokens: 100 });
      writeTaskSettings(dir, validateTaskSettings({ done_criteria: ['npm test', { command: 'echo "a: b" # c', timeout: '2m' }], done_criteria_timeout: '5m' }));
      expect(readTaskSettings(dir)).toEqual({
        max_tokens: 100,
        done_criteria: [{ command: 'npm test' }, { command: 'echo "a: b" # c', timeout_ms: 120_000 }],
        done_criteria_timeout_ms: 300_000,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('settings sent to a scale-out worker as JSON keep their criteria and timeouts', () => {
    const settings = validateTaskSettings({ done_criteria: ['npm test', { command: 'npm run lint', timeout: '2m' }], done_criteria_timeout: '5m' });
    const msg = { projectId: 'p', taskId: 'task-20260101-000000-crit', runId: '20260101-0000000000-1-1', prompt: 'x', settings };
    expect(decodeQueuedTask(Buffer.from(JSON.stringify(msg))).settings).toEqual(settings);
  });
});
