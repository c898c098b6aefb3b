import { useCallback, useState } from 'react';
import Alert, { AlertType, Container as AlertContainer } from '@jetbrains/ring-ui-built/components/alert/alert';

export interface Toast {
  id: number;
  text: string;
  error: boolean;
}

export type Notify = (text: string, error?: boolean) => void;

/** Toast state: at most four at a time, errors stay longer. */
export function useToasts(): [Toast[], Notify, (id: number) => void] {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const dismiss = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);
  const notify = useCallback<Notify>(
    (text, error = false) => {
      const id = Date.now() + Math.random();
      setToasts((t) => [...t.slice(-3), { id, text, error }]);
      setTimeout(() => dismiss(id), error ? 8000 : 4000);
    },
    [dismiss],
  );
  return [toasts, notify, dismiss];
}

/** Ring UI alerts stacked at the top of the page. */
export function Toasts({ toasts, onDismiss }: { toasts: Toast[]; onDismiss: (id: number) => void }) {
  if (toasts.length === 0) return null;
  return (
    <AlertContainer>
      {toasts.map((t) => (
        <Alert key={t.id} type={t.error ? AlertType.ERROR : AlertType.SUCCESS} onCloseRequest={() => onDismiss(t.id)} onClose={() => onDismiss(t.id)} timeout={0} data-test="toast">
          <span className="toast" role={t.error ? 'alert' : 'status'}>
            {t.text}
          </span>
        </Alert>
      ))}
    </AlertContainer>
  );
}
