/** Stream, subject and consumer names of the scale-out mode (docs/scale-out.md). */
export const TASKS_STREAM = 'CONDUCTOR_TASKS';
export const CHANGES_STREAM = 'CONDUCTOR_CHANGES';
export const CONTROL_STREAM = 'CONDUCTOR_CONTROL';
/** Which host runs each task (one message per task subject; docs/scale-out.md "Claims"). */
export const CLAIMS_STREAM = 'CONDUCTOR_CLAIMS';
/** The one durable pull consumer every worker pulls tasks from (work-queue streams allow one per subject). */
export const WORKERS_CONSUMER = 'conductor-workers';
/** The server's durable consumer applying every host's changes to its replica. */
export const REPLICA_CONSUMER = 'conductor-replica';
/** Task token of the records of a project's PROJECT-MESSAGE-BUS.md (never a valid task id). */
export const PROJECT_TOKEN = '_project';
/** Host token of the server's own change records (project-bus posts); never a valid worker id. */
export const SERVER_HOST = '_server';
/** Control messages for every worker (a stop whose owner the server does not know). */
export const ALL_HOSTS = '_all';

const HOST_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

export class ScaleoutError extends Error {
  constructor(
    readonly code: 'INVALID_HOST' | 'INVALID_RECORD' | 'INVALID_TASK' | 'GAP' | 'NATS',
    message: string,
  ) {
    super(message);
    this.name = 'ScaleoutError';
  }
}

/** Host ids become subject tokens: lowercase letters, digits and hyphens, as project ids. */
export function validateHostId(host: string): string {
  if (typeof host !== 'string' || !HOST_PATTERN.test(host)) {
    throw new ScaleoutError('INVALID_HOST', `invalid worker host id "${host}": use 1-63 lowercase letters, digits and hyphens`);
  }
  return host;
}

export const taskSubject = (projectId: string) => `conductor.tasks.${projectId}`;
export const changeSubject = (host: string, projectId: string, taskToken: string) => `conductor.changes.${host}.${projectId}.${taskToken}`;
export const controlSubject = (host: string) => `conductor.control.${host}`;

/** `conductor.changes.<host>.<project>.<task>` → its tokens (undefined for anything else). */
export function parseChangeSubject(subject: string): { host: string; projectId: string; taskToken: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 5 || parts[0] !== 'conductor' || parts[1] !== 'changes') return undefined;
  return { host: parts[2], projectId: parts[3], taskToken: parts[4] };
}
