'use strict';
// Fixtures the benches share: finished runs on disk, shell agents and the config that runs them.
const fs = require('node:fs');
const path = require('node:path');

/**
 * 200 tasks × 5 finished runs in `project`, written by our storage lib (upstream reads them too).
 * Each run-info's mtime is its run's end, as on a project whose runs ended earlier; returns the
 * tasks' runs folders.
 */
function seedFinishedRuns(storage, runsRoot, project) {
  const runsDirs = [];
  for (let t = 0; t < 200; t++) {
    const task = `task-20260101-120000-t${String(t).padStart(4, '0')}`;
    runsDirs.push(path.join(runsRoot, project, task, 'runs'));
    for (let r = 0; r < 5; r++) {
      const runId = `20260101-12${String(t).padStart(4, '0')}${r}000-1-${t * 5 + r + 1}`;
      const runDir = path.join(runsRoot, project, task, 'runs', runId);
      const end = new Date(Date.UTC(2026, 0, 1, 12, 1, t));
      fs.mkdirSync(runDir, { recursive: true });
      const infoPath = path.join(runDir, 'run-info.yaml');
      storage.writeRunInfo(infoPath, {
        version: 1, run_id: runId, project_id: project, task_id: task, agent: 'claude', pid: 0, pgid: 0,
        start_time: new Date(Date.UTC(2026, 0, 1, 12, 0, t)), end_time: end,
        exit_code: 0, status: 'completed', agent_version: '', stdout_path: path.join(runDir, 'agent-stdout.txt'),
      });
      fs.utimesSync(infoPath, end, end);
    }
  }
  return runsDirs;
}

/** An executable `#!/bin/sh` agent named `name` in `dir` running `body`; returns its path. */
function writeAgent(dir, name, body) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

/** A runner config whose only (and default) agent `fast` runs `command`. */
function commandConfig(command) {
  return { agents: { fast: { name: 'fast', type: 'command', command } }, defaults: { agent: 'fast' } };
}

/** The parts the engine's runTask/runJob take from their caller (as a composition root gives them): `lib(name)` requires a built lib. */
function engineParts(lib) {
  const storage = lib('storage');
  const probe = storage.createLivenessProbe();
  return { probe, writers: lib('messagebus').createBusWriters(), indexFor: storage.storageIndexFactory(probe) };
}

module.exports = { commandConfig, engineParts, seedFinishedRuns, writeAgent };
