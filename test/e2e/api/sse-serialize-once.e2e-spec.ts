import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MessageEvent } from '@nestjs/common';
import { BusWriter } from '@app/messagebus';
import { BusHub } from '@app/streams';
import { createApiApp, TestApi } from '../../utils/api-app';
import { waitFor } from '../../utils/wait';

// #15: a bus message is serialised once per stream, not once per client.
describe('bus SSE fan-out', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createApiApp();
  });
  afterAll(async () => {
    await api.close();
  });

  it('hands every client the same event object for a new message', async () => {
    const bus = path.join(api.root, 'fan', 'PROJECT-MESSAGE-BUS.md');
    fs.mkdirSync(path.dirname(bus), { recursive: true });
    const writer = new BusWriter(bus);
    await writer.append({ type: 'INFO', project_id: 'fan', task_id: '', run_id: '', body: 'before' });
    const hub = api.app.get(BusHub);
    const received: MessageEvent[][] = [[], [], []];
    const subs = received.map((into) => hub.stream(bus, undefined).subscribe((e) => (e.type === 'message' ? into.push(e) : undefined)));
    try {
      await writer.append({ type: 'FACT', project_id: 'fan', task_id: '', run_id: '', body: 'after' });
      await waitFor('the new message at every client', () => received.every((r) => r.length >= 2));
      const live = received.map((r) => r[1]);
      expect(JSON.parse(live[0].data as string)).toMatchObject({ type: 'FACT', body: 'after' });
      expect(live[1]).toBe(live[0]);
      expect(live[2]).toBe(live[0]);
      // hydration reads the file per client: equal content, its own object
      expect(received[1][0]).toEqual(received[0][0]);
    } finally {
      subs.forEach((s) => s.unsubscribe());
    }
  });
});
