import { useEffect, useState, type FormEvent } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import { api, describeError } from '../api/client';
import { agentChoices } from '../data/agents';
import { generateTaskId, parseDependencies } from '../data/taskid';

interface NewTaskDialogProps {
  defaultProject?: string;
  defaultAgent?: string;
  onClose: () => void;
  onCreated: (project: string, taskId: string, runId: string) => void;
}

/** Form for POST /api/v1/tasks; the task id is proposed from the prompt and may be edited. */
export function NewTaskDialog({ defaultProject, defaultAgent, onClose, onCreated }: NewTaskDialogProps) {
  const [project, setProject] = useState(defaultProject ?? '');
  const [configured, setConfigured] = useState<string[] | undefined>();
  const choices = agentChoices(configured, defaultAgent);
  const [agent, setAgent] = useState(defaultAgent ?? choices.initial);
  useEffect(() => {
    let live = true;
    api.serverStatus().then(
      (s) => {
        if (!live) return;
        const next = agentChoices(s.configured_agents, defaultAgent);
        setConfigured(s.configured_agents);
        if (next.configured) setAgent((current) => (next.options.includes(current) ? current : next.initial));
      },
      () => undefined, // no status: the known types stay on offer
    );
    return () => {
      live = false;
    };
  }, [defaultAgent]);
  const [prompt, setPrompt] = useState('');
  const [taskId, setTaskId] = useState('');
  const [deps, setDeps] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!project.trim() || !agent.trim() || !prompt.trim()) {
      setError('Project, agent and prompt are required.');
      return;
    }
    const id = taskId.trim() || generateTaskId(prompt);
    setSending(true);
    try {
      const dependsOn = parseDependencies(deps);
      const res = await api.createTask({
        project_id: project.trim(),
        task_id: id,
        agent_type: agent.trim(),
        prompt,
        ...(dependsOn.length ? { depends_on: dependsOn } : {}),
      });
      onCreated(res.project_id ?? project.trim(), res.task_id ?? id, res.run_id);
    } catch (err) {
      setError(describeError(err));
      setSending(false);
    }
  };

  return (
    <div className="overlay" role="presentation" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <form className="dialog" role="dialog" aria-modal="true" aria-label="New task" onSubmit={submit}>
        <h2>New task</h2>
        <label>
          Project
          <input value={project} onChange={(e) => setProject(e.target.value)} placeholder="my-project" autoFocus={!defaultProject} />
        </label>
        <label>
          Agent
          {choices.configured ? (
            <select value={agent} onChange={(e) => setAgent(e.target.value)} aria-label="Agent">
              {choices.options.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          ) : (
            <>
              <input value={agent} onChange={(e) => setAgent(e.target.value)} list="known-agents" />
              <datalist id="known-agents">
                {choices.options.map((a) => (
                  <option key={a} value={a} />
                ))}
              </datalist>
            </>
          )}
        </label>
        <label>
          Prompt
          <textarea value={prompt} onChange={(e) => setPrompt(e.target.value)} rows={6} placeholder="What should the agent do?" autoFocus={!!defaultProject} />
        </label>
        <label>
          Task id
          <input value={taskId} onChange={(e) => setTaskId(e.target.value)} placeholder={generateTaskId(prompt || 'new task')} />
        </label>
        <label>
          Depends on
          <input value={deps} onChange={(e) => setDeps(e.target.value)} placeholder="task ids, comma-separated (optional)" />
        </label>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          <Button type="button" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" primary disabled={sending}>
            Start task
          </Button>
        </div>
      </form>
    </div>
  );
}
