// @vitest-environment jsdom
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { NewTaskDialog } from './NewTaskDialog';

describe('NewTaskDialog', () => {
  it('refuses to send without project, agent and prompt, and creates nothing', async () => {
    const created: string[] = [];
    render(<NewTaskDialog onClose={() => undefined} onCreated={(p, t) => created.push(`${p}/${t}`)} />);
    await userEvent.click(screen.getByRole('button', { name: 'Start task' }));
    expect(screen.getByRole('alert').textContent).toBe('Project, agent and prompt are required.');
    await userEvent.type(screen.getByLabelText('Project'), 'proj');
    await userEvent.clear(screen.getByLabelText('Agent'));
    await userEvent.type(screen.getByLabelText('Prompt'), 'do it');
    await userEvent.click(screen.getByRole('button', { name: 'Start task' }));
    expect(screen.getByRole('alert').textContent).toBe('Project, agent and prompt are required.');
    expect(created).toEqual([]);
  });

  it('prefills project and agent, and proposes a task id from the prompt', async () => {
    render(<NewTaskDialog defaultProject="proj" defaultAgent="codex" onClose={() => undefined} onCreated={() => undefined} />);
    expect((screen.getByLabelText('Project') as HTMLInputElement).value).toBe('proj');
    expect((screen.getByLabelText('Agent') as HTMLInputElement).value).toBe('codex');
    await userEvent.type(screen.getByLabelText('Prompt'), 'Fix the login bug');
    expect((screen.getByLabelText('Task id') as HTMLInputElement).placeholder).toMatch(/^task-\d{8}-\d{6}-fix-the-login-bug/);
  });

  it('closes on Escape', async () => {
    let closed = 0;
    render(<NewTaskDialog onClose={() => closed++} onCreated={() => undefined} />);
    await userEvent.type(screen.getByLabelText('Project'), '{Escape}');
    expect(closed).toBe(1);
  });
});
