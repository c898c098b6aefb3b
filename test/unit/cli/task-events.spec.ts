import type { BusMessage } from '@app/messagebus';
import { describeMessage, LoopState } from '../../../apps/cli/src/commands/engine/progress/task-events';

const msg = (type: string, body: string, run_id = ''): BusMessage => ({ msg_id: 'm', ts: new Date(), type, project_id: 'p', task_id: 't', run_id, body });

describe('task progress events', () => {
  const ctx = (done: boolean) => ({ agentOf: () => 'codex', isDone: () => done, restartDelayMs: 1000 });

  it('narrates attempts, exits, restarts, child waits and DONE, and tracks the phase', () => {
    const state: LoopState = { attempt: 1, phase: 'starting' };
    expect(describeMessage(msg('INFO', 'starting root agent (restart #1)'), state, ctx(false))).toBeUndefined();
    expect(state).toEqual({ attempt: 2, phase: 'starting' });
    expect(describeMessage(msg('RUN_START', 'run started\nrun_dir: /r/x\nprompt: p', 'R2'), state, ctx(false))).toEqual({ tone: 'start', text: 'attempt 2: run R2 started with agent codex' });
    expect(state.phase).toBe('running');
    expect(describeMessage(msg('RUN_CRASH', 'run stopped with code 7\nrun_dir: /r/x', 'R2'), state, ctx(false))).toEqual({
      tone: 'warn',
      text: 'attempt 2: run R2 exited with code 7; no DONE yet, restarting in 1s',
    });
    expect(state.phase).toBe('restarting in 1s');
    expect(describeMessage(msg('RUN_STOP', 'run stopped with code 0', 'R3'), state, ctx(true))?.text).toBe('attempt 2: run R3 exited with code 0; DONE written');
    expect(describeMessage(msg('INFO', 'waiting for 2 children to complete: a, b'), state, ctx(true))).toEqual({ tone: 'info', text: 'waiting for 2 child runs to finish: a, b' });
    expect(state.phase).toBe('waiting for child runs');
    expect(describeMessage(msg('INFO', 'task completed (all children finished)'), state, ctx(true))).toEqual({ tone: 'ok', text: 'DONE: task completed (all children finished)' });
    expect(describeMessage(msg('ERROR', 'task failed: max restarts (3) exceeded'), state, ctx(false))).toEqual({ tone: 'error', text: 'task failed: max restarts (3) exceeded' });
    expect(describeMessage(msg('PROGRESS', 'halfway\nmore', 'R3'), state, ctx(false))).toEqual({ tone: 'agent', text: 'PROGRESS: halfway' });
    expect(describeMessage(msg('RUN_EVENT', 'x', 'R3'), state, ctx(false))).toBeUndefined();
  });
});
