import { TriggerError } from '../task-starter';

/**
 * The few GitHub calls the pull-request side needs (docs/triggers.md), over Node's own fetch:
 * REST v3 with GitHub's documented headers, conditional GETs (ETag / If-None-Match, so a catch-up
 * that finds nothing changed costs no rate limit), and the one GraphQL mutation REST lacks
 * (`markPullRequestReadyForReview`). Why not @octokit/core: docs/decisions/forge-pull-requests.md.
 * The token goes in the Authorization header only; no message here ever carries it.
 */
export interface GithubPull {
  number: number;
  node_id: string;
  html_url: string;
  state: string;
  draft?: boolean;
  head: { ref: string };
}

export interface GithubIssueState {
  state: string;
}

/** A conditional GET: `changed: false` when GitHub answered 304 Not Modified. */
export type Conditional<T> = { changed: false } | { changed: true; etag?: string; data: T };

export interface NewPull {
  title: string;
  head: string;
  base: string;
  body: string;
  draft: boolean;
}

/** What the pull-request side asks of GitHub (the app injects GithubRestClient; tests may give another). */
export interface GithubApi {
  createPull(repository: string, pull: NewPull): Promise<GithubPull>;
  updatePull(repository: string, number: number, change: { body: string }): Promise<GithubPull>;
  /** Open and closed pull requests whose head is `<owner>:<branch>` (GitHub filters; the caller checks the ref too). */
  pullsWithHead(repository: string, branch: string): Promise<GithubPull[]>;
  getPull(repository: string, number: number, etag?: string): Promise<Conditional<GithubPull>>;
  getIssue(repository: string, number: number, etag?: string): Promise<Conditional<GithubIssueState>>;
  /** Marks a draft ready for review (GraphQL); answers whether it is still a draft. */
  markReady(pullNodeId: string): Promise<{ isDraft: boolean }>;
}

export const GITHUB_API = Symbol('GITHUB_API');

/** A call GitHub refused or that did not reach it; `status` 0 when there was no answer. */
export class GithubApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export const MARK_READY_MUTATION = `mutation MarkReady($id: ID!) {
  markPullRequestReadyForReview(input: { pullRequestId: $id }) {
    pullRequest { isDraft }
  }
}`;

const TIMEOUT_MS = 30_000;

/** GitHub Enterprise Server's GraphQL lives at /api/graphql beside /api/v3; github.com's at /graphql. */
export function graphqlUrl(apiUrl: string): string {
  return apiUrl.endsWith('/api/v3') ? `${apiUrl.slice(0, -'/v3'.length)}/graphql` : `${apiUrl}/graphql`;
}

/**
 * `owner/name` of a GitHub remote URL (`https://github.com/o/n.git`, `git@github.com:o/n.git`,
 * `ssh://git@github.com/o/n`), on github.com or on the host of an Enterprise Server's `api_url`.
 */
export function githubRepositoryOf(remoteUrl: string, apiUrl: string): string {
  const hosts = new Set(['github.com', new URL(apiUrl).hostname.replace(/^api\./, '')]);
  const m = /^(?:[a-z+]+:\/\/)?(?:[^@/]+@)?([^:/]+)(?::\d+)?[:/]([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(remoteUrl.trim());
  if (!m || !hosts.has(m[1].toLowerCase())) {
    throw new TriggerError('BAD_REQUEST', `cannot tell the GitHub repository from the remote's URL ${JSON.stringify(remoteUrl).slice(0, 200)}: give "repository": "owner/name"`);
  }
  return `${m[2]}/${m[3]}`;
}

function repoPath(repository: string): string {
  const [owner, name] = repository.split('/');
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
}

export class GithubRestClient implements GithubApi {
  constructor(
    private readonly apiUrl: string,
    private readonly token: string,
  ) {}

  createPull(repository: string, pull: NewPull): Promise<GithubPull> {
    return this.json('POST', `${repoPath(repository)}/pulls`, pull);
  }

  updatePull(repository: string, number: number, change: { body: string }): Promise<GithubPull> {
    return this.json('PATCH', `${repoPath(repository)}/pulls/${number}`, change);
  }

  pullsWithHead(repository: string, branch: string): Promise<GithubPull[]> {
    const owner = repository.split('/')[0];
    return this.json('GET', `${repoPath(repository)}/pulls?state=all&head=${encodeURIComponent(`${owner}:${branch}`)}`);
  }

  getPull(repository: string, number: number, etag?: string): Promise<Conditional<GithubPull>> {
    return this.conditional(`${repoPath(repository)}/pulls/${number}`, etag);
  }

  getIssue(repository: string, number: number, etag?: string): Promise<Conditional<GithubIssueState>> {
    return this.conditional(`${repoPath(repository)}/issues/${number}`, etag);
  }

  async markReady(pullNodeId: string): Promise<{ isDraft: boolean }> {
    const res = await this.send('POST', graphqlUrl(this.apiUrl), { query: MARK_READY_MUTATION, variables: { id: pullNodeId } });
    const body = (await res.json().catch(() => ({}))) as { data?: { markPullRequestReadyForReview?: { pullRequest?: { isDraft?: boolean } } }; errors?: Array<{ message?: string }> };
    if (!res.ok || body.errors?.length) throw new GithubApiError(`GitHub GraphQL markPullRequestReadyForReview failed: ${body.errors?.[0]?.message ?? `HTTP ${res.status}`}`, res.status);
    return { isDraft: body.data?.markPullRequestReadyForReview?.pullRequest?.isDraft ?? false };
  }

  private async conditional<T>(path: string, etag?: string): Promise<Conditional<T>> {
    const res = await this.send('GET', this.apiUrl + path, undefined, etag ? { 'If-None-Match': etag } : {});
    if (res.status === 304) return { changed: false };
    const data = await this.body<T>('GET', path, res);
    return { changed: true, etag: res.headers.get('etag') ?? undefined, data };
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.body<T>(method, path, await this.send(method, this.apiUrl + path, body));
  }

  private async body<T>(method: string, path: string, res: Response): Promise<T> {
    const text = await res.text();
    if (!res.ok) {
      let message = text.slice(0, 200);
      try {
        const parsed = JSON.parse(text) as { message?: string; errors?: Array<{ message?: string }> };
        message = [parsed.message, ...(parsed.errors ?? []).map((e) => e.message)].filter(Boolean).join('; ');
      } catch {
        /* not JSON: the text's start */
      }
      throw new GithubApiError(`GitHub ${method} ${path.split('?')[0]} answered ${res.status}: ${message}`, res.status);
    }
    return JSON.parse(text) as T;
  }

  private async send(method: string, url: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> {
    try {
      return await fetch(url, {
        method,
        headers: {
          Accept: 'application/vnd.github+json',
          Authorization: `Bearer ${this.token}`,
          'X-GitHub-Api-Version': '2022-11-28',
          'User-Agent': 'conductor-loop',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...extra,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new GithubApiError(`GitHub ${method} ${new URL(url).pathname} did not answer: ${(err as Error).message}`, 0);
    }
  }
}

/** The client for a configured forge (undefined when no token is set: pull requests are off). */
export function createGithubApi(cfg: { api_url: string; token?: string } | undefined): GithubApi | undefined {
  return cfg?.token ? new GithubRestClient(cfg.api_url, cfg.token) : undefined;
}
