import { useEffect, useState, type FormEvent } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import Dialog from '@jetbrains/ring-ui-built/components/dialog/dialog';
import { Header as IslandHeader, Content as IslandContent } from '@jetbrains/ring-ui-built/components/island/island';
import Input from '@jetbrains/ring-ui-built/components/input/input';
import Panel from '@jetbrains/ring-ui-built/components/panel/panel';
import { api, describeError } from '../api/client';
import { agentChoices } from '../data/agents';
import { generateTaskId, parseDependencies } from '../data/taskid';
import { RingSelect } from '../ui/RingSelect';
import { useModalDialog } from '../ui/useModalDialog';

interface NewTaskDialogProps {
  defaultProject?: string;
  defaultAgent?: string;
  onClose: () => void;
  onCreated: (project: string, taskId: string, runId: string) => void;
}

/** Form for POST /api/v1/tasks; the task id is proposed from the prompt and may be edited. */
export function NewTaskDialog({ defaultProject, defaultAgent, onClose, onCreated }: NewTaskDialogProps) {
  const [project, setProject] = useState(defaultProject ?? '');
  useModalDialog('New task');
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
    <Dialog show label="New task" trapFocus autoFocusFirst onCloseAttempt={onClose} showCloseButton closeButtonTitle="Close" className="task-dialog" contentClassName="dialog-content">
      <form
        onSubmit={submit}
        className="dialog-form"
        onKeyDown={(e) => {
          // Ring's Esc shortcut is not seen while a text field has focus; Escape closes from one.
          // (Escape on the agent Select only closes its popup.)
          const field = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
          if (e.key !== 'Escape' || !field) return;
          e.stopPropagation();
          onClose();
        }}
      >
        <IslandHeader>New task</IslandHeader>
        <IslandContent>
          <div className="dialog-fields">
            <Input label="Project" value={project} onChange={(e) => setProject(e.target.value)} placeholder="my-project" autoFocus={!defaultProject} />
            {choices.configured ? (
              <RingSelect label="Agent" visibleLabel="Agent" value={agent} options={choices.options.map((value) => ({ value }))} onChange={setAgent} className="agent-select" />
            ) : (
              <>
                <Input label="Agent" value={agent} onChange={(e) => setAgent(e.target.value)} list="known-agents" />
                <datalist id="known-agents">
                  {choices.options.map((a) => (
                    <option key={a} value={a} />
                  ))}
                </datalist>
              </>
            )}
            <Input
              multiline
              label="Prompt"
              value={prompt}
              onChange={(e) => setPrompt(e.target.value)}
              rows={6}
              placeholder="What should the agent do?"
              autoFocus={!!defaultProject}
            />
            <Input label="Task id" value={taskId} onChange={(e) => setTaskId(e.target.value)} placeholder={generateTaskId(prompt || 'new task')} />
            <Input label="Depends on" value={deps} onChange={(e) => setDeps(e.target.value)} placeholder="task ids, comma-separated (optional)" />
            {error && (
              <p className="form-error" role="alert">
                {error}
              </p>
            )}
          </div>
        </IslandContent>
        <Panel>
          <Button type="submit" primary disabled={sending}>
            Start task
          </Button>
          <Button type="button" onClick={onClose}>
            Cancel
          </Button>
        </Panel>
      </form>
    </Dialog>
  );
}
