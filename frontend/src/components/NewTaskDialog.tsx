import { useEffect, useRef, useState, type FormEvent } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import Checkbox from '@jetbrains/ring-ui-built/components/checkbox/checkbox';
import Dialog from '@jetbrains/ring-ui-built/components/dialog/dialog';
import { Header as IslandHeader, Content as IslandContent } from '@jetbrains/ring-ui-built/components/island/island';
import Input from '@jetbrains/ring-ui-built/components/input/input';
import Panel from '@jetbrains/ring-ui-built/components/panel/panel';
import { api, describeError } from '../api/client';
import { agentChoices } from '../data/agents';
import { generateTaskId, parseDependencies } from '../data/taskid';
import { EMPTY_TASK_OPTIONS, taskOptionFields, type TaskOptionsForm } from '../data/taskoptions';
import { RingSelect } from '../ui/RingSelect';
import { useModalDialog } from '../ui/useModalDialog';

interface NewTaskDialogProps {
  defaultProject?: string;
  defaultAgent?: string;
  onClose: () => void;
  onCreated: (project: string, taskId: string, runId: string) => void;
}

/**
 * Form for POST /api/v1/tasks; the task id is proposed from the prompt and may be edited. The agent
 * starts as the latest run's, else the server's default agent (#30.11). "Repository, worktree and
 * budget" holds the optional fields (docs/worktrees.md, docs/usage-and-budgets.md), and the
 * completion criteria (docs/completion-criteria.md).
 */
export function NewTaskDialog({ defaultProject, defaultAgent, onClose, onCreated }: NewTaskDialogProps) {
  const [project, setProject] = useState(defaultProject ?? '');
  useModalDialog('New task');
  const [configured, setConfigured] = useState<string[] | undefined>();
  const [serverDefault, setServerDefault] = useState<string | undefined>();
  const choices = agentChoices(configured, defaultAgent, serverDefault);
  const [agent, setAgent] = useState(defaultAgent ?? choices.initial);
  const touched = useRef(false); // the user picked an agent: the server's answer does not replace it
  const pickAgent = (value: string) => {
    touched.current = true;
    setAgent(value);
  };
  useEffect(() => {
    let live = true;
    api.serverStatus().then(
      (s) => {
        if (!live) return;
        const next = agentChoices(s.configured_agents, defaultAgent, s.default_agent);
        setConfigured(s.configured_agents);
        setServerDefault(s.default_agent);
        setAgent((current) => (touched.current && (!next.configured || next.options.includes(current)) ? current : next.initial));
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
  const [options, setOptions] = useState<TaskOptionsForm>(EMPTY_TASK_OPTIONS);
  const option = (key: keyof TaskOptionsForm) => (e: { target: { value: string } }) => setOptions((o) => ({ ...o, [key]: e.target.value }));
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!project.trim() || !agent.trim() || !prompt.trim()) {
      setError('Project, agent and prompt are required.');
      return;
    }
    const extra = taskOptionFields(options);
    if ('error' in extra) {
      setError(extra.error);
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
        ...extra.fields,
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
              <RingSelect label="Agent" visibleLabel="Agent" value={agent} options={choices.options.map((value) => ({ value }))} onChange={pickAgent} className="agent-select" />
            ) : (
              <>
                <Input label="Agent" value={agent} onChange={(e) => pickAgent(e.target.value)} list="known-agents" />
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
            <details className="dialog-more">
              <summary>Repository, worktree and budget; completion criteria</summary>
              <div className="dialog-fields">
                <Input label="Working repository" value={options.projectRoot} onChange={option('projectRoot')} placeholder="folder the agent works in, e.g. ~/src/app (optional)" />
                <Checkbox
                  label="Run in a git worktree of the repository"
                  checked={options.worktree}
                  onChange={(e) => setOptions((o) => ({ ...o, worktree: e.target.checked }))}
                />
                {options.worktree && (
                  <>
                    <Input label="Base branch or commit" value={options.base} onChange={option('base')} placeholder="default: the repository's HEAD" />
                    <Input label="Paths" value={options.paths} onChange={option('paths')} placeholder="repository paths the task changes, comma-separated (optional)" />
                    <p className="dialog-hint">The task works on branch conductor/{taskId.trim() || '<task id>'}; merge it from the diff tab.</p>
                  </>
                )}
                <Input label="Max tokens" value={options.maxTokens} onChange={option('maxTokens')} inputMode="numeric" placeholder="budget of the task tree (optional)" />
                <Input label="Max cost (USD)" value={options.maxCostUsd} onChange={option('maxCostUsd')} inputMode="decimal" placeholder="e.g. 5 (optional)" />
                <Input label="Max wall time" value={options.maxWallTime} onChange={option('maxWallTime')} placeholder="e.g. 30m or 2h (optional)" />
                <Input
                  multiline
                  rows={3}
                  label="Completion criteria"
                  value={options.doneCriteria}
                  onChange={option('doneCriteria')}
                  placeholder="shell commands that must pass before DONE counts, one per line, e.g. npm test (optional)"
                />
                {options.doneCriteria.trim() && <Input label="Criteria timeout" value={options.doneTimeout} onChange={option('doneTimeout')} placeholder="per command, e.g. 5m (default 10m)" />}
              </div>
            </details>
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
