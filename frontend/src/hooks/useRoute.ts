import { useCallback, useEffect, useState } from 'react';

/** What the URL names: `?project=…&task=…&run=…` (the needs_input webhook links the first two). */
export interface Route {
  project?: string;
  task?: string;
  run?: string;
}

export function parseRoute(search: string): Route {
  const q = new URLSearchParams(search);
  const get = (k: string) => q.get(k) || undefined;
  const project = get('project');
  const task = project ? get('task') : undefined;
  const run = task ? get('run') : undefined;
  return { project, task, run };
}

export function routeSearch(route: Route): string {
  const q = new URLSearchParams();
  if (route.project) q.set('project', route.project);
  if (route.project && route.task) q.set('task', route.task);
  if (route.project && route.task && route.run) q.set('run', route.run);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * The selection lives in the URL, so every project, task and run has a link; user navigation
 * pushes a history entry and Back/Forward restore the selection.
 */
export function useRoute(): [Route, (next: Route) => void] {
  const [route, setRoute] = useState<Route>(() => parseRoute(globalThis.location?.search ?? ''));
  useEffect(() => {
    const onPop = () => setRoute(parseRoute(location.search));
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  const navigate = useCallback((next: Route) => {
    const search = routeSearch(next);
    if (search !== location.search) history.pushState(null, '', `${location.pathname}${search}${location.hash}`);
    setRoute(parseRoute(search));
  }, []);
  return [route, navigate];
}
