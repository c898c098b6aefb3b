import { useState, type FormEvent } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';

/** Shown when the server answers 401: the key is kept for this browser session only. */
export function KeyPrompt({ onSubmit, rejected }: { onSubmit: (key: string) => void; rejected: boolean }) {
  const [key, setKey] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (key.trim()) onSubmit(key.trim());
  };
  return (
    <div className="overlay">
      <form className="dialog" role="dialog" aria-modal="true" aria-label="API key required" onSubmit={submit}>
        <h2>API key required</h2>
        <p>This conductor server needs an API key. It is kept for this browser session only.</p>
        {rejected && (
          <p className="form-error" role="alert">
            The server rejected that key. Check CONDUCTOR_API_KEY or --api-key of the server.
          </p>
        )}
        <label>
          API key
          <input type="password" value={key} onChange={(e) => setKey(e.target.value)} autoFocus autoComplete="off" />
        </label>
        <div className="dialog-actions">
          <Button type="submit" primary>
            Use key
          </Button>
        </div>
      </form>
    </div>
  );
}
