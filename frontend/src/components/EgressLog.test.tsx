// @vitest-environment jsdom
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { BusMessage } from '../api/types';
import { EgressLog } from './EgressLog';

const msg = (id: string, type: string, runId: string, host: string, port: string, method: string): BusMessage => ({
  msg_id: id,
  timestamp: '2026-11-28T10:00:00Z',
  type,
  run_id: runId,
  body: `egress: ${host}:${port}\nhost: ${host}\nport: ${port}\nmethod: ${method}`,
});

describe('EgressLog', () => {
  it("lists only this run's EGRESS_DENIED messages with method, host and port", () => {
    render(
      <EgressLog
        runId="r1"
        messages={[
          msg('m1', 'EGRESS_DENIED', 'r1', 'evil.test', '443', 'CONNECT'),
          msg('m2', 'EGRESS_ALLOWED', 'r1', 'api.anthropic.com', '80', 'POST'),
          msg('m3', 'EGRESS_DENIED', 'r2', 'other-run.test', '80', 'GET'),
          msg('m4', 'EGRESS_DENIED', 'r1', '127.0.0.1', '9', 'GET'),
        ]}
      />,
    );
    const region = screen.getByRole('region', { name: 'Egress denied' });
    expect(region.querySelector('h4')?.textContent).toBe('Egress denied (2)');
    expect([...region.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['CONNECT evil.test:443 2026-11-28T10:00:00Z', 'GET 127.0.0.1:9 2026-11-28T10:00:00Z']);
  });

  it('shows nothing when the run had no denial', () => {
    const { container } = render(<EgressLog runId="r1" messages={[msg('m2', 'EGRESS_ALLOWED', 'r1', 'api.anthropic.com', '80', 'POST')]} />);
    expect(container.textContent).toBe('');
  });
});
