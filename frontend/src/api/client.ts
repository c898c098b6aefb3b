import type {
  BusMessage,
  CreateTaskRequest,
  CreateTaskResponse,
  CursorPaged,
  FileContent,
  FlatRun,
  OpenQuestion,
  Paginated,
  Project,
  ProjectRun,
  ProjectStats,
  Schedule,
  ScheduleRun,
  ServerStatus,
  TaskListItem,
  UsageReport,
} from './types';

const KEY_STORAGE = 'conductor.apiKey';
/** The largest page the cursor-paged lists answer (CURSOR_PAGE_MAX, libs/storage/src/paging.ts). */
const PAGE_MAX = 5000;

/** The server answered 401: the user must enter the API key. */
export class AuthRequiredError extends Error {
  constructor() {
    super('API key required');
  }
}

/** The server could not be reached at all (network error). */
export class ServerDownError extends Error {}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Listener = () => void;

/** Where the API key lives: sessionStorage in the browser (this session only). */
export type KeyStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/**
 * Thin fetch wrapper. Every request carries X-Conductor-Client: web-ui and, once the user has
 * entered one, the API key (kept in sessionStorage for this browser session, D11).
 */
export class ApiClient {
  private authListeners = new Set<Listener>();
  private keyListeners = new Set<Listener>();

  constructor(
    private readonly base = '',
    private readonly storage: KeyStorage | undefined = globalThis.sessionStorage,
  ) {}

  get apiKey(): string | null {
    try {
      return this.storage?.getItem(KEY_STORAGE) ?? null;
    } catch {
      return null;
    }
  }

  setApiKey(key: string | null): void {
    if (key) this.storage?.setItem(KEY_STORAGE, key);
    else this.storage?.removeItem(KEY_STORAGE);
    this.keyListeners.forEach((l) => l());
  }

  /** Called whenever the key changes (views that showed "needs an API key" load again). */
  onKeyChange(listener: Listener): () => void {
    this.keyListeners.add(listener);
    return () => this.keyListeners.delete(listener);
  }

  onAuthRequired(listener: Listener): () => void {
    this.authListeners.add(listener);
    return () => this.authListeners.delete(listener);
  }

  /** URL for EventSource, which cannot send headers: the key goes in ?api_key=. */
  streamUrl(path: string): string {
    const key = this.apiKey;
    if (!key) return this.base + path;
    return `${this.base}${path}${path.includes('?') ? '&' : '?'}api_key=${encodeURIComponent(key)}`;
  }

  async request<T>(path: string, init: RequestInit = {}): Promise<T> {
    const headers = new Headers(init.headers);
    headers.set('X-Conductor-Client', 'web-ui');
    if (init.body && !headers.has('Content-Type')) headers.set('Content-Type', 'application/json');
    const key = this.apiKey;
    if (key) headers.set('Authorization', `Bearer ${key}`);
    let res: Response;
    try {
      res = await fetch(this.base + path, { ...init, headers });
    } catch {
      throw new ServerDownError('cannot reach the conductor server');
    }
    if (res.status === 401) {
      this.authListeners.forEach((l) => l());
      throw new AuthRequiredError();
    }
    const text = await res.text();
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (!res.ok) throw new ApiError(res.status, errorMessage(res.status, body));
    return body as T;
  }

  /** GET /api/v1/status: the configured agent names and the default agent among others. */
  serverStatus(): Promise<Partial<ServerStatus>> {
    return this.request('/api/v1/status');
  }

  version(): Promise<{ version: string }> {
    return this.request('/api/v1/version');
  }

  /**
   * Every item of a cursor-paged list (issue #29): pages of the server's maximum, following
   * `next_cursor` while `has_more` (stops if a page would not move the cursor on).
   */
  async allPages<K extends string, T>(path: string, key: K): Promise<T[]> {
    const all: T[] = [];
    const sep = path.includes('?') ? '&' : '?';
    for (let after = ''; ; ) {
      const page = await this.request<CursorPaged & { [k in K]?: T[] | null }>(`${path}${sep}limit=${PAGE_MAX}${after && `&after=${enc(after)}`}`);
      all.push(...(page[key] ?? []));
      if (!page.has_more || !page.next_cursor || page.next_cursor === after) return all;
      after = page.next_cursor;
    }
  }

  projects(): Promise<Project[]> {
    return this.allPages<'projects', Project>('/api/projects', 'projects');
  }

  stats(p: string): Promise<ProjectStats> {
    return this.request(`/api/projects/${enc(p)}/stats`);
  }

  flatRuns(p: string): Promise<FlatRun[]> {
    return this.allPages<'runs', FlatRun>(`/api/projects/${enc(p)}/runs/flat`, 'runs');
  }

  async tasks(p: string): Promise<TaskListItem[]> {
    const all: TaskListItem[] = [];
    for (let offset = 0; ; ) {
      const page = await this.request<Paginated<TaskListItem>>(`/api/projects/${enc(p)}/tasks?limit=500&offset=${offset}`);
      all.push(...(page.items ?? []));
      if (!page.has_more || !page.items?.length) return all;
      offset += page.items.length;
    }
  }

  taskUsage(p: string, t: string): Promise<UsageReport> {
    return this.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/usage`);
  }

  setPaused(p: string, t: string | undefined, paused: boolean): Promise<{ paused: boolean; changed: boolean }> {
    const path = t ? `/api/projects/${enc(p)}/tasks/${enc(t)}` : `/api/projects/${enc(p)}`;
    return this.request(`${path}/${paused ? 'pause' : 'unpause'}`, { method: 'POST' });
  }

  taskFile(p: string, t: string): Promise<FileContent> {
    return this.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/file?name=TASK.md`);
  }

  run(p: string, t: string, r: string): Promise<ProjectRun> {
    return this.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/runs/${enc(r)}`);
  }

  runFile(p: string, t: string, r: string, name: string): Promise<FileContent> {
    return this.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/runs/${enc(r)}/file?name=${enc(name)}`);
  }

  runStreamPath(p: string, t: string, r: string, name: string): string {
    return `/api/projects/${enc(p)}/tasks/${enc(t)}/runs/${enc(r)}/stream?name=${enc(name)}`;
  }

  async messages(p: string, t?: string): Promise<BusMessage[]> {
    const path = t ? `/api/projects/${enc(p)}/tasks/${enc(t)}/messages` : `/api/projects/${enc(p)}/messages`;
    return (await this.request<{ messages: BusMessage[] | null }>(`${path}?limit=500`)).messages ?? [];
  }

  messagesStreamPath(p: string, t?: string): string {
    return t ? `/api/projects/${enc(p)}/tasks/${enc(t)}/messages/stream` : `/api/projects/${enc(p)}/messages/stream`;
  }

  postMessage(p: string, t: string | undefined, type: string, body: string): Promise<{ msg_id: string }> {
    const path = t ? `/api/projects/${enc(p)}/tasks/${enc(t)}/messages` : `/api/projects/${enc(p)}/messages`;
    return this.request(path, { method: 'POST', body: JSON.stringify({ type, body }) });
  }

  createTask(req: CreateTaskRequest): Promise<CreateTaskResponse> {
    return this.request('/api/v1/tasks', { method: 'POST', body: JSON.stringify(req) });
  }

  stopRun(p: string, t: string, r: string): Promise<unknown> {
    return this.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/runs/${enc(r)}/stop`, { method: 'POST' });
  }

  stopTask(p: string, t: string): Promise<{ stopped_runs: number }> {
    return this.request(`/api/v1/tasks/${enc(t)}?project_id=${enc(p)}`, { method: 'DELETE' });
  }

  openQuestions(): Promise<OpenQuestion[]> {
    return this.allPages<'questions', OpenQuestion>('/api/v1/questions', 'questions');
  }

  answer(p: string, t: string, body: string, questionId?: string): Promise<{ msg_id: string; answers: string[] }> {
    return this.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/answer`, { method: 'POST', body: JSON.stringify({ body, question_id: questionId }) });
  }

  resumeTask(p: string, t: string): Promise<unknown> {
    return this.request(`/api/projects/${enc(p)}/tasks/${enc(t)}/resume`, { method: 'POST' });
  }

  async schedules(): Promise<Schedule[]> {
    return (await this.request<{ schedules: Schedule[] | null }>('/api/v1/schedules')).schedules ?? [];
  }

  fireSchedule(name: string): Promise<{ schedule: string; run: ScheduleRun }> {
    return this.request(`/api/v1/schedules/${enc(name)}/fire`, { method: 'POST' });
  }
}

const enc = encodeURIComponent;

function errorMessage(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const err = (body as { error?: unknown; message?: unknown }).error;
    if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
      return (err as { message: string }).message;
    }
    if (typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  }
  if (typeof body === 'string' && body.trim()) return body.trim().split('\n')[0];
  return `HTTP ${status}`;
}

export function describeError(err: unknown): string {
  if (err instanceof ServerDownError) return 'Cannot reach the conductor server. Is `conductor` running? Retrying…';
  if (err instanceof AuthRequiredError) return 'The server needs an API key.';
  if (err instanceof ApiError) return `Server error ${err.status}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The dashboard link the server prints carries its generated key in the URL fragment
 * (`/ui/#token=…`), which the browser never sends to a server: store it like a key the user
 * entered and drop it from the address bar (and history), keeping any other fragment.
 */
export function adoptKeyFromFragment(client: ApiClient, loc: Pick<Location, 'hash' | 'pathname' | 'search'> = location, hist: Pick<History, 'replaceState' | 'state'> = history): boolean {
  if (!loc.hash.startsWith('#')) return false;
  const params = new URLSearchParams(loc.hash.slice(1));
  const token = params.get('token');
  if (token === null) return false;
  params.delete('token');
  if (token.trim() !== '') client.setApiKey(token.trim());
  const rest = params.toString();
  hist.replaceState(hist.state, '', `${loc.pathname}${loc.search}${rest ? `#${rest}` : ''}`);
  return true;
}

export const api = new ApiClient();
