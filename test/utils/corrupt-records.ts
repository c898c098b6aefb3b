/** A runs root with corrupt records of every kind (issue #29), shared by the API and CLI tests. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeRun } from './run-fixtures';

export const CORRUPT_RUN_INFO: Record<string, string | Buffer> = {
  garbage: Buffer.from([0x00, 0xff, 0x3a, 0x20, 0x5b, 0x7b, 0x0a, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x22]),
  list: '- run_id: x\n- status: completed\n',
  scalar: 'just some words\n',
  syntax: 'run_id: [unclosed\nstatus: completed\n',
  types: 'run_id: run-types\nstatus: completed\npid: [1, 2]\nexit_code: zero\n',
};
export const CORRUPT_KINDS = Object.keys(CORRUPT_RUN_INFO);
const kinds = CORRUPT_KINDS;
export const T = (name: string) => `task-20260101-120000-${name}`;
export const RUN = (name: string) => `20260101-1200000000-${name}`;

/** A root with a corrupt run of every kind, corrupt task state files beside good runs, and a healthy project. */
export function seedCorruptRoot(root: string): void {
  for (const kind of kinds) {
    const dir = join(root, 'bad', T(kind), 'runs', RUN(kind));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'run-info.yaml'), CORRUPT_RUN_INFO[kind]);
  }
  // a task with one good run and one corrupt one: the good one stays visible
  writeRun(root, 'bad', T('mixed'), RUN('mixed-ok'));
  mkdirSync(join(root, 'bad', T('mixed'), 'runs', RUN('mixed-bad')), { recursive: true });
  writeFileSync(join(root, 'bad', T('mixed'), 'runs', RUN('mixed-bad'), 'run-info.yaml'), '[[[');
  writeRun(root, 'bad', T('taskcfg'), RUN('taskcfg'));
  writeFileSync(join(root, 'bad', T('taskcfg'), 'TASK-CONFIG.yaml'), 'depends_on: [unclosed\n');
  writeRun(root, 'bad', T('worktree'), RUN('worktree'));
  writeFileSync(join(root, 'bad', T('worktree'), 'WORKTREE.yaml'), '{{{ not yaml');
  writeRun(root, 'bad', T('settings'), RUN('settings'));
  writeFileSync(join(root, 'bad', T('settings'), 'TASK-SETTINGS.yaml'), 'max_tokens: [1\n');
  writeRun(root, 'good', T('fine'), RUN('fine'));
}

