import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { Handler, scriptedServer, ScriptedServer } from '../../utils/scripted-http';
import { tempRoot } from '../runner/helpers';

/**
 * A runs root, a HOME and real 127.0.0.1 HTTP servers scripted per test (REST agents point at
 * them through base_url); everything is closed and removed after the file's tests.
 */
export function restAgentSandbox(homePrefix: string) {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = mkdtempSync(join(tmpdir(), homePrefix));
  const servers: ScriptedServer[] = [];
  const serve = async (...handlers: Handler[]) => {
    const s = await scriptedServer(handlers);
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    tmp.cleanup();
    rmSync(home, { recursive: true, force: true });
  });
  return { tmp, layout, home, serve };
}
