'use strict';
// Loaded with NODE_OPTIONS=--require into a CLI run under `fiu-run -f <ctl>` (fiu.ts, spawnUnderFiu):
// libfiu is already set up in this process; its children (a verify command's shells) must not
// inherit it, or each would open its own control FIFO on a thread, racing the shell's dup2 (EBUSY).
delete process.env.LD_PRELOAD;
delete process.env.FIU_CTRL_FIFO;
