import { useEffect } from 'react';

/**
 * Ring's Dialog traps focus but does not mark its `role=dialog` element modal; screen readers
 * then read the page behind it. Marks the open dialog named `label` with aria-modal.
 */
export function useModalDialog(label: string): void {
  useEffect(() => {
    document.querySelector(`[role=dialog][aria-label="${label}"]`)?.setAttribute('aria-modal', 'true');
  });
}
