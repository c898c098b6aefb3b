import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, TestApi } from '../../utils/api-app';
import { writeLargeBus } from '../../utils/hostile-root';

const P = 'paged';
const COUNT = 6200;

/** Issue #29 finding 5: message lists are bounded by default (one page of the 5000 maximum) with a cursor to the next page. */
describe('message lists answer one page by default, with a cursor', () => {
  let api: TestApi;
  const get = async (url: string) => {
    const res = await api.app.inject({ method: 'GET', url });
    expect([url, res.statusCode]).toEqual([url, 200]);
    return res.json() as { messages: { msg_id: string; body: string }[]; has_more: boolean; next_cursor?: string };
  };
  beforeAll(async () => {
    api = await createApiApp({ disableTaskStart: true });
    fs.mkdirSync(path.join(api.root, P));
    writeLargeBus(path.join(api.root, P, 'PROJECT-MESSAGE-BUS.md'), COUNT, P);
  });
  afterAll(async () => api.close());

  it('GET /api/projects/{p}/messages without limit: the newest 5000, then older pages through before=', async () => {
    const first = await get(`/api/projects/${P}/messages`);
    expect(first.messages).toHaveLength(5000);
    expect(first.messages[4999].body).toBe(`message ${COUNT - 1} ${'x'.repeat(60)}`);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBe(first.messages[0].msg_id);
    const older = await get(`/api/projects/${P}/messages?before=${first.next_cursor}`);
    expect(older.messages).toHaveLength(COUNT - 5000);
    expect(older.has_more).toBe(false);
    expect(older.next_cursor).toBeUndefined();
    expect(older.messages[0].body).toMatch(/^message 0 /);
    // an explicit limit keeps upstream's rule: the newest `limit`
    const two = await get(`/api/projects/${P}/messages?limit=2`);
    expect(two.messages.map((m) => m.body.split(' ')[1])).toEqual([String(COUNT - 2), String(COUNT - 1)]);
  });

  it('GET /api/v1/messages without after: the oldest 5000, then the rest through after=next_cursor', async () => {
    const first = await get(`/api/v1/messages?project_id=${P}`);
    expect(first.messages).toHaveLength(5000);
    expect(first.messages[0].body).toMatch(/^message 0 /);
    expect(first.has_more).toBe(true);
    const rest = await get(`/api/v1/messages?project_id=${P}&after=${first.next_cursor}`);
    expect(rest.messages).toHaveLength(COUNT - 5000);
    expect(rest.messages[0].body).toMatch(/^message 5000 /);
    expect(rest.has_more).toBe(false);
    const unknown = await api.app.inject({ method: 'GET', url: `/api/v1/messages?project_id=${P}&after=MSG-nope` });
    expect([unknown.statusCode, unknown.json().error.message]).toEqual([404, 'message id not found']);
  });
});
