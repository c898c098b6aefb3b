import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@app/storage';

describe('schedules and triggers config', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'trg-cfg-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const load = (text: string) => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, text);
    return () => loadConfig(path, { strict: false });
  };
  const task = '    task:\n      project: p1\n      prompt: hi\n';

  it('reads a schedule with its defaults', () => {
    const cfg = load(`schedules:\n  nightly:\n    cron: "0 3 * * *"\n    timezone: Europe/Berlin\n${task}`)();
    expect(cfg.schedules?.nightly).toEqual({ name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Berlin', missed: 'skip', max_missed: 10, concurrency: 'skip', task: { project_id: 'p1', prompt: 'hi', agent_type: '' } });
  });

  it.each([
    ['a bad cron', 'cron: "61 * * * *"', /config\.yaml:3:5: schedules\.s\.cron: /],
    ['an unknown time zone', 'cron: "* * * * *"\n    timezone: Mars/Base', /config\.yaml:4:5: schedules\.s\.timezone: "Mars\/Base" is not an IANA time zone/],
    ['an unsupported concurrency policy', 'cron: "* * * * *"\n    concurrency: parallel', /config\.yaml:4:5: schedules\.s\.concurrency: must be one of skip, replace, queue, got "parallel"/],
    ['an unknown missed-run policy', 'cron: "* * * * *"\n    missed: always', /schedules\.s\.missed: must be one of skip, run_once, run_all/],
    ['a zero max_missed', 'cron: "* * * * *"\n    max_missed: 0', /schedules\.s\.max_missed: must be a positive integer/],
  ])('fails closed on %s with file:line:col: key: problem', (_what, line, re) => {
    expect(load(`schedules:\n  s:\n    ${line}\n${task}`)).toThrow(re);
  });

  it('refuses a name the id rule refuses and a missing task', () => {
    expect(load(`schedules:\n  "Bad Name":\n    cron: "* * * * *"\n${task}`)).toThrow(/config\.yaml:2:3: schedules\.Bad Name: name "Bad Name" must be lower-case/);
    expect(load('triggers:\n  t:\n    rate_per_minute: 5\n')).toThrow(/triggers\.t\.task: is required/);
  });

  it('refuses a token hash that is not a sha256', () => {
    expect(load(`triggers:\n  t:\n    token_sha256: abc\n${task}`)).toThrow(/config\.yaml:3:5: triggers\.t\.token_sha256: must be 64 hex digits/);
  });
});
