import type { ReactNode } from 'react';
import Alert, { AlertType } from '@jetbrains/ring-ui-built/components/alert/alert';

/** A full-width inline Ring alert under the header (server down, request errors). */
export function Banner({ tone, children }: { tone: 'error' | 'warning'; children: ReactNode }) {
  return (
    <div className="banner" role="alert">
      <Alert inline closeable={false} showWithAnimation={false} type={tone === 'error' ? AlertType.ERROR : AlertType.WARNING}>
        {children}
      </Alert>
    </div>
  );
}
