import { GithubApiError, GithubRestClient, graphqlUrl, MARK_READY_MUTATION } from '@app/triggers';
import { GithubDouble, githubDouble } from '../../utils/github-double';

/** The REST/GraphQL client against GitHub's published descriptions (test/utils/github-double.ts). */
describe('GithubRestClient', () => {
  let gh: GithubDouble;
  let api: GithubRestClient;
  beforeAll(async () => {
    gh = await githubDouble();
    api = new GithubRestClient(gh.url, 'ghp_test-token');
  }, 60_000);
  afterAll(() => gh?.close());

  it('opens a draft, finds it by its branch, reads it conditionally, updates its body and marks it ready: every request as GitHub documents it', async () => {
    const pull = await api.createPull('octo-org/app', { title: 'Fix login', head: 'conductor/task-1', base: 'main', body: 'Closes #7.', draft: true });
    expect(pull).toMatchObject({ number: 1347, draft: true, state: 'open', head: { ref: 'conductor/task-1' } });
    expect(pull.html_url).toMatch(/^https:\/\/github\.com\//);
    expect((await api.pullsWithHead('octo-org/app', 'conductor/task-1')).map((p) => p.number)).toEqual([1347]);
    expect(await api.pullsWithHead('octo-org/app', 'conductor/other')).toEqual([]);
    const first = await api.getPull('octo-org/app', 1347);
    expect(first.changed && first.etag).toBeTruthy();
    const etag = first.changed ? first.etag : undefined;
    expect(await api.getPull('octo-org/app', 1347, etag)).toEqual({ changed: false });
    await api.updatePull('octo-org/app', 1347, { body: 'Closes #7.\n\nmore' });
    const after = await api.getPull('octo-org/app', 1347, etag);
    expect(after.changed).toBe(true);
    expect(await api.markReady(pull.node_id)).toEqual({ isDraft: false });
    expect(gh.pulls.get(1347)?.draft).toBe(false);
    expect(gh.requests.every((r) => r.authorization === 'Bearer ghp_test-token')).toBe(true);
    expect(gh.problems).toEqual([]);
  });

  it('says what GitHub refused, without the token', async () => {
    const err = await api.getPull('octo-org/app', 99).catch((e: GithubApiError) => e);
    expect(err).toBeInstanceOf(GithubApiError);
    expect((err as GithubApiError).status).toBe(404);
    expect((err as Error).message).toBe('GitHub GET /repos/octo-org/app/pulls/99 answered 404: Not Found');
    await expect(api.markReady('bm8tc3VjaA==')).rejects.toThrow(/markPullRequestReadyForReview failed: Could not resolve to a node/);
    const down = new GithubRestClient('http://127.0.0.1:9', 'ghp_secret-token');
    const refused = await down.createPull('octo-org/app', { title: 't', head: 'h', base: 'main', body: '', draft: true }).catch((e: Error) => e);
    expect((refused as Error).message).toMatch(/^GitHub POST \/repos\/octo-org\/app\/pulls did not answer: /);
    expect((refused as Error).message).not.toContain('ghp_secret-token');
  });

  it("the double holds requests to GitHub's descriptions: a pull request without a head, or a GraphQL field GitHub lacks, is a problem", async () => {
    const before = gh.problems.length;
    await fetch(`${gh.url}/repos/octo-org/app/pulls`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ title: 't', base: 'main' }) });
    await fetch(`${gh.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query: 'mutation { markPullRequestReadyForReview(input: {pullRequestId: "x"}) { pullRequest { isReady } } }' }) });
    const found = gh.problems.splice(before);
    expect(found.some((p) => /POST \/repos\/\{owner\}\/\{repo\}\/pulls request: .*head/.test(p))).toBe(true);
    expect(found.some((p) => /graphql: Cannot query field "isReady" on type "PullRequest"/.test(p))).toBe(true);
  });

  it('sends a mutation GitHub\'s schema accepts, to the GraphQL endpoint of github.com or of an Enterprise Server', () => {
    expect(MARK_READY_MUTATION).toContain('markPullRequestReadyForReview');
    expect(graphqlUrl('https://api.github.com')).toBe('https://api.github.com/graphql');
    expect(graphqlUrl('https://ghe.example/api/v3')).toBe('https://ghe.example/api/graphql');
  });
});
