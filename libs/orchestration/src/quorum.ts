import type { BusMessage } from '@app/messagebus';

export const DEFAULT_QUORUM_REQUIRED = 2;
const APPROVAL_TOKENS = ['APPROVED', 'LGTM', '+1'];
const REJECTION_TOKENS = ['REJECTED', 'BLOCKED', 'CHANGES_REQUESTED'];

export type Verdict = 'approval' | 'rejection';

export interface QuorumVote {
  runId: string;
  msgId: string;
  verdict: Verdict;
}

export interface QuorumResult {
  required: number;
  runs: string[];
  /** One vote per reviewing run: its latest approving or rejecting message. */
  votes: QuorumVote[];
  approvals: number;
  rejections: number;
  /** DECISION/REVIEW messages ignored because they carry no run id. */
  ignoredWithoutRunId: number;
  met: boolean;
  reason?: string;
}

/** Upper-cased body: approval tokens are checked first, then rejection tokens. */
export function reviewVerdict(body: string): Verdict | undefined {
  const upper = body.toUpperCase();
  if (APPROVAL_TOKENS.some((t) => upper.includes(t))) return 'approval';
  if (REJECTION_TOKENS.some((t) => upper.includes(t))) return 'rejection';
  return undefined;
}

/**
 * Review quorum over DECISION/REVIEW messages of the listed runs. Unlike upstream, a message
 * without a run id never counts (anyone could have posted it), and each run is one reviewer:
 * a run posting "LGTM" twice is one approval; its latest verdict wins.
 */
export function evaluateQuorum(messages: BusMessage[], runs: string[], required = DEFAULT_QUORUM_REQUIRED): QuorumResult {
  const wanted = new Set(runs);
  const latest = new Map<string, QuorumVote>();
  let ignoredWithoutRunId = 0;
  for (const msg of messages) {
    const type = msg.type.toUpperCase();
    if (type !== 'DECISION' && type !== 'REVIEW') continue;
    const runId = msg.run_id?.trim() ?? '';
    if (runId === '') {
      ignoredWithoutRunId++;
      continue;
    }
    if (!wanted.has(runId)) continue;
    const verdict = reviewVerdict(msg.body);
    if (verdict) latest.set(runId, { runId, msgId: msg.msg_id, verdict });
  }
  const votes = runs.filter((r) => latest.has(r)).map((r) => latest.get(r)!);
  const approvals = votes.filter((v) => v.verdict === 'approval').length;
  const rejections = votes.length - approvals;
  const need = required > 0 ? required : DEFAULT_QUORUM_REQUIRED;
  const met = approvals >= need && rejections === 0;
  const reason = met
    ? undefined
    : rejections > 0
      ? `rejection veto (${rejections} rejection(s))`
      : `insufficient approvals (${approvals}/${need})`;
  return { required: need, runs, votes, approvals, rejections, ignoredWithoutRunId, met, reason };
}

/** The text report; its last line is `result: QUORUM MET` or `result: QUORUM NOT MET — <reason>`. */
export function formatQuorumReport(r: QuorumResult): string {
  const lines = ['review quorum check', `  runs considered: ${r.runs.join(', ')}`, `  approvals: ${r.approvals} (required: ${r.required})`, `  rejections: ${r.rejections}`];
  const ids = (v: Verdict) => r.votes.filter((x) => x.verdict === v).map((x) => x.msgId);
  if (ids('approval').length) lines.push(`  approval messages: ${ids('approval').join(', ')}`);
  if (ids('rejection').length) lines.push(`  rejection messages: ${ids('rejection').join(', ')}`);
  if (r.ignoredWithoutRunId) lines.push(`  ignored (no run id): ${r.ignoredWithoutRunId}`);
  lines.push(r.met ? 'result: QUORUM MET' : `result: QUORUM NOT MET — ${r.reason}`);
  return `${lines.join('\n')}\n`;
}
