'use strict';
// Jest reporter (jest.config.js): the fault suite's totals over every fault spec of the run
// (test/fault/tally.ts), printed once at the end with the seeds that replay it (issue #31).
const { existsSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

class FaultTallyReporter {
  constructor() {
    this.file = join(tmpdir(), `fault-tally-${process.pid}.jsonl`);
    rmSync(this.file, { force: true });
    // the test workers start after the reporters and inherit this
    process.env.FAULT_TALLY_FILE = this.file;
  }

  onRunComplete() {
    if (!existsSync(this.file)) return;
    const rows = readFileSync(this.file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    rmSync(this.file, { force: true });
    const sum = (k) => rows.reduce((n, r) => n + (Number(r[k]) || 0), 0);
    const seeds = rows.filter((r) => r.seed !== undefined).map((r) => `${r.suite} FAULT_SEED=${r.seed}`);
    process.stdout.write(
      `\nfault suite: ${rows.length} specs, ${sum('cases')} cases, ${sum('faults')} injected faults, ${sum('checks')} invariant checks, ${sum('violations')} violations` +
        `${seeds.length ? `\n  replay: ${seeds.join('; ')}` : ''}\n`,
    );
  }
}

module.exports = FaultTallyReporter;
