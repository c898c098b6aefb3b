// watchStall (#17): a stalled run gets STALLED once; with kill, the marker stays after the kill even
// though the dying agent still writes to its run folder (that is not new activity).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { STALLED_FILE, watchStall } from '@app/runner';
import { killGroup, running, Sandbox, writeRun } from '../../utils/run-fixtures';
import { processAlive } from '../../utils/processes';
import { waitFor } from '../../utils/wait';

describe('watchStall', () => {
  let box: Sandbox;
  beforeEach(() => (box = new Sandbox()));
  afterEach(() => box.cleanup());

  it('keeps STALLED on a run it killed while the dying agent writes its last words', async () => {
    const runsDir = path.join(box.root, 'p', 'task-20260101-120000-stall', 'runs');
    const runDir = path.join(runsDir, '20260101-1200000000-1-1');
    fs.mkdirSync(runDir, { recursive: true });
    const stdout = path.join(runDir, 'agent-stdout.txt');
    // an agent that is silent until SIGTERM, then writes to its stdout file twice and exits
    const agent = spawn(process.execPath, ['-e', `
      const fs = require('fs');
      process.on('SIGTERM', () => {
        fs.appendFileSync(${JSON.stringify(stdout)}, 'terminating\\n');
        setTimeout(() => { fs.appendFileSync(${JSON.stringify(stdout)}, 'bye\\n'); process.exit(143); }, 300);
      });
      setInterval(() => {}, 1000);
      fs.writeFileSync(${JSON.stringify(path.join(runDir, 'agent-ready'))}, '');
    `], { detached: true, stdio: 'ignore' });
    try {
      await waitFor('the agent to handle SIGTERM', () => fs.existsSync(path.join(runDir, 'agent-ready')));
      writeRun(box.root, 'p', 'task-20260101-120000-stall', '20260101-1200000000-1-1', running(agent.pid!));
      const bus = path.join(box.dir, 'bus.md');
      fs.writeFileSync(bus, '');
      const posts: string[] = [];
      // let the run folder age past the stall window before watching
      const old = new Date(Date.now() - 60_000);
      for (const f of fs.readdirSync(runDir)) fs.utimesSync(path.join(runDir, f), old, old);
      fs.utimesSync(bus, old, old);
      const stop = watchStall({ runsDir, busPath: bus, stallAfterMs: 1_000, kill: true, pollMs: 50, post: async (_t, body) => void posts.push(body) });
      try {
        await waitFor('the agent to be killed', () => !processAlive(agent.pid!), 20_000);
        expect(fs.readFileSync(stdout, 'utf8')).toBe('terminating\nbye\n');
        // the watcher keeps polling the still-"running" run-info: many ticks see the new output
        await new Promise((r) => setTimeout(r, 1_000));
        expect(fs.existsSync(path.join(runDir, STALLED_FILE))).toBe(true);
        expect(posts).toEqual([expect.stringContaining('stalled: no output and no bus activity for 1s; terminating it')]);
      } finally {
        stop();
      }
    } finally {
      killGroup(agent);
    }
  });
});
