import * as fs from 'node:fs';
import { startServer } from '../../../apps/api/src/server';
import { makeTempRoot } from '../../utils/api-app';

describe('startServer', () => {
  it('falls back to the next free port unless the port is explicit', async () => {
    const tmp = makeTempRoot();
    const base = 20000 + Math.floor(Math.random() * 20000);
    const first = await startServer({ root: tmp.root, host: '127.0.0.1', port: base, portExplicit: true });
    try {
      expect(first.port).toBe(base);
      expect(first.url).toBe(`http://127.0.0.1:${base}`);
      const second = await startServer({ root: tmp.root, host: '127.0.0.1', port: base });
      try {
        expect(second.port).toBe(base + 1);
        const res = await fetch(`${second.url}/api/v1/health`);
        expect(await res.json()).toEqual({ status: 'ok' });
      } finally {
        await second.app.close();
      }
      await expect(startServer({ root: tmp.root, host: '127.0.0.1', port: base, portExplicit: true })).rejects.toThrow(/EADDRINUSE|address already in use/);
    } finally {
      await first.app.close();
      fs.rmSync(tmp.dir, { recursive: true, force: true });
    }
  });
});
