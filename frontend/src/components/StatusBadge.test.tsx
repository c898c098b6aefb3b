// @vitest-environment jsdom
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { HeartbeatBadge, StatusBadge } from './StatusBadge';

describe('StatusBadge', () => {
  it.each(['running', 'completed', 'failed'] as const)('shows %s as text and as its colour class', (status) => {
    render(<StatusBadge status={status} />);
    const badge = screen.getByText(status);
    expect(badge.className).toBe(`status status-${status}`);
  });
});

describe('HeartbeatBadge', () => {
  it('tells screen readers how fresh the output is and since when', () => {
    render(<HeartbeatBadge colour="yellow" age="2m" />);
    const badge = screen.getByRole('img', { name: 'heartbeat: no output for a while (last output 2m ago)' });
    expect(badge.getAttribute('data-heartbeat')).toBe('yellow');
    expect(badge.className).toBe('heartbeat heartbeat-yellow');
  });

  it('uses a different text for each colour', () => {
    render(
      <>
        <HeartbeatBadge colour="green" age="1s" />
        <HeartbeatBadge colour="red" age="1h" />
      </>,
    );
    expect(screen.getByRole('img', { name: /output is fresh/ }).getAttribute('data-heartbeat')).toBe('green');
    expect(screen.getByRole('img', { name: /no output for a long time/ }).getAttribute('data-heartbeat')).toBe('red');
  });
});
