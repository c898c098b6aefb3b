import { useEffect, useRef, type ReactNode } from 'react';
import Tabs from '@jetbrains/ring-ui-built/components/tabs/dumb-tabs';
import Tab from '@jetbrains/ring-ui-built/components/tabs/tab';

export const RUN_TABS = [
  { id: 'stdout', label: 'stdout' },
  { id: 'output', label: 'output' },
  { id: 'stderr', label: 'stderr' },
  { id: 'task', label: 'TASK.md' },
  { id: 'info', label: 'run-info' },
  { id: 'diff', label: 'diff' },
] as const;
export type TabId = (typeof RUN_TABS)[number]['id'];

/**
 * Ring UI tabs over the run's files. Ring renders the titles as plain links; the tab roles, the
 * selected state and arrow-key movement between titles are added here.
 */
export function RunTabs({ selected, onSelect, children }: { selected: TabId; onSelect: (id: TabId) => void; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.querySelector('.run-tab-titles')?.setAttribute('role', 'tablist');
    ref.current?.querySelector('.run-tab-titles')?.setAttribute('aria-label', 'Run files');
  });
  const move = (delta: number) => {
    const i = RUN_TABS.findIndex((t) => t.id === selected);
    const next = RUN_TABS[(i + delta + RUN_TABS.length) % RUN_TABS.length];
    onSelect(next.id);
    requestAnimationFrame(() => ref.current?.querySelector<HTMLElement>(`[data-tab="${next.id}"]`)?.focus());
  };
  return (
    <div className="run-tabs" ref={ref}>
      <Tabs selected={selected} onSelect={(key) => onSelect(key as TabId)} titleContainerClassName="run-tab-titles" tabContainerClassName="tab-body">
        {RUN_TABS.map((t) => (
          <Tab
            key={t.id}
            id={t.id}
            title={t.label}
            titleProps={{
              role: 'tab',
              'aria-label': t.label,
              'aria-selected': selected === t.id,
              'aria-controls': 'run-tab-panel',
              tabIndex: selected === t.id ? 0 : -1,
              'data-tab': t.id,
              onKeyDown: (e: React.KeyboardEvent) => {
                if (e.key === 'ArrowRight') move(1);
                else if (e.key === 'ArrowLeft') move(-1);
                else return;
                e.preventDefault();
              },
            } as object}
          >
            <div id="run-tab-panel" className="tab-panel" role="tabpanel" aria-label={t.label}>
              {children}
            </div>
          </Tab>
        ))}
      </Tabs>
    </div>
  );
}
