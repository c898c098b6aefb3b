// @vitest-environment jsdom
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { KeyPrompt } from './KeyPrompt';

describe('KeyPrompt', () => {
  it('submits the trimmed key', async () => {
    const keys: string[] = [];
    render(<KeyPrompt onSubmit={(k) => keys.push(k)} rejected={false} />);
    await userEvent.type(screen.getByLabelText('API key'), '  s3cret  ');
    await userEvent.click(screen.getByRole('button', { name: 'Use key' }));
    expect(keys).toEqual(['s3cret']);
  });

  it('does not submit an empty or blank key', async () => {
    const keys: string[] = [];
    render(<KeyPrompt onSubmit={(k) => keys.push(k)} rejected={false} />);
    await userEvent.click(screen.getByRole('button', { name: 'Use key' }));
    await userEvent.type(screen.getByLabelText('API key'), '   ');
    await userEvent.click(screen.getByRole('button', { name: 'Use key' }));
    expect(keys).toEqual([]);
  });

  it('says so only when the server rejected the key', () => {
    const { rerender } = render(<KeyPrompt onSubmit={() => undefined} rejected={false} />);
    expect(screen.queryByRole('alert')).toBeNull();
    rerender(<KeyPrompt onSubmit={() => undefined} rejected />);
    expect(screen.getByRole('alert').textContent).toContain('The server rejected that key.');
  });

  it('is a modal dialog with a password field', () => {
    render(<KeyPrompt onSubmit={() => undefined} rejected={false} />);
    expect(screen.getByRole('dialog', { name: 'API key required' }).getAttribute('aria-modal')).toBe('true');
    expect((screen.getByLabelText('API key') as HTMLInputElement).type).toBe('password');
  });
});
