import { validateProjectId, validateRunId, validateTaskId } from '@app/storage';

/** URIs of the resources: a project's or task's bus, and a run's output. */
export const BUS_URI_PREFIX = 'conductor://bus/';
export const RUN_URI_PREFIX = 'conductor://runs/';

export function projectBusUri(projectId: string): string {
  return `${BUS_URI_PREFIX}${projectId}`;
}

export function taskBusUri(projectId: string, taskId: string): string {
  return `${BUS_URI_PREFIX}${projectId}/${taskId}`;
}

export function runOutputUri(projectId: string, taskId: string, runId: string): string {
  return `${RUN_URI_PREFIX}${projectId}/${taskId}/${runId}/output`;
}

export type ParsedUri =
  | { kind: 'bus'; projectId: string; taskId?: string }
  | { kind: 'output'; projectId: string; taskId: string; runId: string };

/** Parses one of our URIs (ids validated as everywhere); undefined for anything else. */
export function parseResourceUri(uri: string): ParsedUri | undefined {
  if (uri.startsWith(BUS_URI_PREFIX)) {
    const parts = uri.slice(BUS_URI_PREFIX.length).split('/');
    if (parts.length === 1) return { kind: 'bus', projectId: validateProjectId(parts[0]) };
    if (parts.length === 2) return { kind: 'bus', projectId: validateProjectId(parts[0]), taskId: validateTaskId(parts[1]) };
    return undefined;
  }
  if (uri.startsWith(RUN_URI_PREFIX)) {
    const parts = uri.slice(RUN_URI_PREFIX.length).split('/');
    if (parts.length !== 4 || parts[3] !== 'output') return undefined;
    return { kind: 'output', projectId: validateProjectId(parts[0]), taskId: validateTaskId(parts[1]), runId: validateRunId(parts[2]) };
  }
  return undefined;
}
