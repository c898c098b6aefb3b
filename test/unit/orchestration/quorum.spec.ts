import type { BusMessage } from '@app/messagebus';
import { evaluateQuorum, formatQuorumReport, reviewVerdict } from '@app/orchestration';

let n = 0;
function msg(type: string, runId: string, body: string): BusMessage {
  n++;
  return { msg_id: `MSG-${n}`, ts: new Date(0), type, project_id: 'p', task_id: 't', run_id: runId, body };
}

describe('review quorum', () => {
  it('is met with two approving runs', () => {
    const r = evaluateQuorum([msg('REVIEW', 'r1', 'LGTM'), msg('DECISION', 'r2', 'approved, ship it'), msg('REVIEW', 'r3', 'APPROVED')], ['r1', 'r2'], 2);
    expect(r).toMatchObject({ met: true, approvals: 2, rejections: 0 });
    expect(formatQuorumReport(r).trimEnd().split('\n').at(-1)).toBe('result: QUORUM MET');
  });

  it('does not count messages without a run id', () => {
    const r = evaluateQuorum([msg('REVIEW', 'r1', 'LGTM'), msg('REVIEW', '', 'APPROVED'), msg('REVIEW', '  ', '+1')], ['r1', 'r2'], 2);
    expect(r).toMatchObject({ met: false, approvals: 1, ignoredWithoutRunId: 2, reason: 'insufficient approvals (1/2)' });
    expect(formatQuorumReport(r)).toContain('result: QUORUM NOT MET — insufficient approvals (1/2)\n');
  });

  it('counts one vote per run (its latest) and ignores other types and runs', () => {
    const r = evaluateQuorum(
      [msg('REVIEW', 'r1', 'LGTM'), msg('REVIEW', 'r1', 'LGTM again'), msg('FACT', 'r2', 'APPROVED'), msg('REVIEW', 'r9', 'APPROVED')],
      ['r1', 'r2'],
      2,
    );
    expect(r).toMatchObject({ met: false, approvals: 1 });
  });

  it('vetoes on a rejection', () => {
    const r = evaluateQuorum([msg('REVIEW', 'r1', 'LGTM'), msg('REVIEW', 'r2', 'LGTM'), msg('REVIEW', 'r3', 'changes_requested: fix it')], ['r1', 'r2', 'r3'], 2);
    expect(r).toMatchObject({ met: false, approvals: 2, rejections: 1, reason: 'rejection veto (1 rejection(s))' });
  });

  it('reads verdicts approval-first and defaults required to 2', () => {
    expect(reviewVerdict('approved but BLOCKED')).toBe('approval');
    expect(reviewVerdict('Blocked by tests')).toBe('rejection');
    expect(reviewVerdict('looks fine')).toBeUndefined();
    expect(evaluateQuorum([], ['r1'], 0).required).toBe(2);
  });
});
