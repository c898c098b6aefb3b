import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createApiApp, TestApi } from '../../utils/api-app';

describe('static UI', () => {
  let uiDir: string;
  let api: TestApi;
  beforeAll(async () => {
    uiDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ui-'));
    fs.mkdirSync(path.join(uiDir, 'assets'));
    fs.writeFileSync(path.join(uiDir, 'index.html'), '<html>dashboard</html>');
    fs.writeFileSync(path.join(uiDir, 'assets', 'app.js'), 'console.log(1)');
    fs.writeFileSync(path.join(uiDir, 'favicon.svg'), '<svg/>');
    api = await createApiApp({ uiDir, apiKey: 'k' });
  });
  afterAll(async () => {
    await api.close();
    fs.rmSync(uiDir, { recursive: true, force: true });
  });

  it('serves the build at / and /ui/ without a key, and redirects /ui', async () => {
    const get = (url: string) => api.app.inject({ method: 'GET', url });
    const index = await get('/');
    expect(index.statusCode).toBe(200);
    expect(index.body).toBe('<html>dashboard</html>');
    expect(index.headers['content-type']).toContain('text/html');
    const js = await get('/assets/app.js');
    expect(js.body).toBe('console.log(1)');
    expect(js.headers['content-type']).toContain('javascript');
    expect((await get('/favicon.svg')).headers['content-type']).toContain('image/svg+xml');
    expect((await get('/ui/')).body).toBe('<html>dashboard</html>');
    expect((await get('/ui/assets/app.js')).body).toBe('console.log(1)');
    const redirect = await get('/ui');
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/ui/');
    expect((await get('/missing.js')).statusCode).toBe(404);
    // Issue #12: every page load asks for /favicon.ico (no key needed, never a 404)
    const icon = await get('/favicon.ico');
    expect([icon.statusCode, icon.headers['content-type']]).toEqual([200, 'image/svg+xml']);
    expect(icon.body).toMatch(/^<svg /);
    expect((await get('/api/projects')).statusCode).toBe(401);
  });

  it('serves a built-in page explaining how to build the UI when there is no build', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'no-ui-'));
    const bare = await createApiApp({ uiDir: empty });
    try {
      for (const url of ['/', '/ui/']) {
        const res = await bare.app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(200);
        expect(res.body).toContain('npm run build:ui');
      }
      const icon = await bare.app.inject({ method: 'GET', url: '/favicon.ico' });
      expect([icon.statusCode, icon.headers['content-type']]).toEqual([200, 'image/svg+xml']);
    } finally {
      await bare.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
