import { useState, type FormEvent } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import Dialog from '@jetbrains/ring-ui-built/components/dialog/dialog';
import { Header as IslandHeader, Content as IslandContent } from '@jetbrains/ring-ui-built/components/island/island';
import Input from '@jetbrains/ring-ui-built/components/input/input';
import Panel from '@jetbrains/ring-ui-built/components/panel/panel';
import { useModalDialog } from '../ui/useModalDialog';

/** Shown when the server answers 401: the key is kept for this browser session only. */
export function KeyPrompt({ onSubmit, rejected }: { onSubmit: (key: string) => void; rejected: boolean }) {
  const [key, setKey] = useState('');
  useModalDialog('API key required');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (key.trim()) onSubmit(key.trim());
  };
  return (
    <Dialog show label="API key required" trapFocus className="task-dialog" contentClassName="dialog-content">
      <form onSubmit={submit} className="dialog-form">
        <IslandHeader>API key required</IslandHeader>
        <IslandContent>
          <div className="dialog-fields">
            <p>
              This conductor server needs an API key. It is kept for this browser session only. The dashboard link the server printed at
              start enters it for you; the key is also in ~/.run-agent/api-key on the server&apos;s machine.
            </p>
            {rejected && (
              <p className="form-error" role="alert">
                The server rejected that key. Check --api-key / CONDUCTOR_API_KEY of the server, or ~/.run-agent/api-key when it generated one.
              </p>
            )}
            <Input label="API key" type="password" value={key} onChange={(e) => setKey(e.target.value)} autoFocus autoComplete="off" />
          </div>
        </IslandContent>
        <Panel>
          <Button type="submit" primary>
            Use key
          </Button>
        </Panel>
      </form>
    </Dialog>
  );
}
