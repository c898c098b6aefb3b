import type { BusMessage } from '../api/types';

/** `host:` / `port:` / `method:` lines of an EGRESS_DENIED body (libs/runner/src/job-sandbox.ts). */
function field(body: string, name: string): string {
  const line = body.split('\n').find((l) => l.startsWith(`${name}: `));
  return line ? line.slice(name.length + 2).trim() : '';
}

/** The run's egress denials (docs/sandbox.md): its EGRESS_DENIED messages on the task bus. */
export function egressDenials(messages: readonly BusMessage[], runId: string): BusMessage[] {
  return messages.filter((m) => m.type === 'EGRESS_DENIED' && m.run_id === runId);
}

export function EgressLog({ messages, runId }: { messages: readonly BusMessage[]; runId: string }) {
  const denied = egressDenials(messages, runId);
  if (denied.length === 0) return null;
  return (
    <section className="egress-log" aria-label="Egress denied" data-testid="egress-log">
      <h4>Egress denied ({denied.length})</h4>
      <ul>
        {denied.map((m) => (
          <li key={m.msg_id}>
            {field(m.body, 'method')} {field(m.body, 'host')}:{field(m.body, 'port')}
            <span className="muted"> {m.timestamp}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
