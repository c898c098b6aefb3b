import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseBus, type BusMessage } from '@app/messagebus';
import { CHANGES_STREAM, connectNats, WRITE_ID_META } from '@app/scaleout';
import { readRunInfo } from '@app/storage';
import { natsServerAvailable } from '../../utils/nats-server';
import { clusterForFile, replicaDiff, waitFor } from './cluster';

// Real nats-server, `conductor --nats` and a `run-agent worker` with its own runs root: the
// server's writes to a task go to the worker that owns it and come back through replication.
const describeNats = natsServerAvailable() ? describe : describe.skip;

function messages(root: string, p: string, t: string): BusMessage[] {
  const f = join(root, p, t, 'TASK-MESSAGE-BUS.md');
  return existsSync(f) ? parseBus(readFileSync(f)) : [];
}

/** Reads an SSE response into `text` until aborted. */
function follow(url: string): { text: () => string; close: () => void } {
  const abort = new AbortController();
  let text = '';
  void fetch(url, { signal: abort.signal, headers: { Accept: 'text/event-stream' } })
    .then(async (res) => {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString('utf8');
    })
    .catch(() => undefined);
  return { text: () => text, close: () => abort.abort() };
}

describeNats('task writes from the server go to the owning worker (real nats-server)', () => {
  const c = clusterForFile(1);

  it('a posted message and an answer are written by the worker, replicated back and streamed by the server', async () => {
    const p = 'writes';
    const t = 'task-20260101-000000-ask01';
    const worker = c.workers[0];
    const replica = c.server.root;
    await c.submit(p, t, { FAKE_AGENT_ASK_WAIT: 'which colour?' });
    const question = await waitFor('the agent question on the replica', () => messages(replica, p, t).find((m) => m.type === 'QUESTION'), 60_000);
    const sse = follow(`${c.serverUrl}/api/v1/messages/stream?project_id=${p}&task_id=${t}`);
    try {
      await waitFor('the SSE stream to replay the question', () => sse.text().includes(question.msg_id), 15_000);

      const post = await fetch(`${c.serverUrl}/api/v1/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: p, task_id: t, type: 'USER', body: 'a note from the dashboard' }),
      });
      if (post.status !== 201) throw new Error(`post: ${post.status} ${await post.text()}`);
      const posted = (await post.json()) as { msg_id: string };
      // written by the worker (its message carries the routed write's id) ...
      const onWorker = messages(worker.root, p, t).find((m) => m.msg_id === posted.msg_id);
      expect(onWorker).toMatchObject({ type: 'USER', body: 'a note from the dashboard' });
      expect(onWorker!.meta?.[WRITE_ID_META]).toMatch(/^[A-Za-z0-9_-]+$/);
      // ... and back on the server: replica file and SSE
      await waitFor('the note on the server SSE', () => sse.text().includes(posted.msg_id), 15_000);
      expect(messages(replica, p, t).filter((m) => m.msg_id === posted.msg_id)).toHaveLength(1);

      const answer = await fetch(`${c.serverUrl}/api/projects/${p}/tasks/${t}/answer`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ body: 'blue' }),
      });
      expect(answer.status).toBe(201);
      const answered = (await answer.json()) as { msg_id: string; answers: string[] };
      expect(answered.answers).toEqual([question.msg_id]);
      const onWorkerAnswer = messages(worker.root, p, t).find((m) => m.msg_id === answered.msg_id);
      expect(onWorkerAnswer).toMatchObject({ type: 'ANSWER', body: 'blue', parents: [{ msg_id: question.msg_id, kind: 'answers' }] });
      await waitFor('the answer on the server SSE', () => sse.text().includes(answered.msg_id), 15_000);

      // the waiting agent got it on the worker and finished there
      const run = readdirSync(join(worker.root, p, t, 'runs'))[0];
      await waitFor('the agent to read the answer', () => existsSync(join(worker.root, p, t, 'runs', run, 'answer.txt')), 30_000);
      expect(readFileSync(join(worker.root, p, t, 'runs', run, 'answer.txt'), 'utf8').trim()).toBe('blue');
      await waitFor('DONE on the replica', () => existsSync(join(replica, p, t, 'DONE')), 30_000);
      // the server never wrote into its replica: every file equals the worker's (a local write
      // would have been refused as a divergence and show up here)
      await waitFor('the replica to match the worker', () => replicaDiff(worker.root, replica, p).length === 0, 20_000).catch(() => undefined);
      expect(replicaDiff(worker.root, replica, p)).toEqual([]);
      expect(c.server.out).not.toMatch(/diverged/);
    } finally {
      sse.close();
    }
  });

  it('an answer to a task without an open question is the worker’s 404, nothing written', async () => {
    const p = 'writes';
    const t = 'task-20260101-000000-ask01';
    const before = messages(c.workers[0].root, p, t).length;
    const res = await fetch(`${c.serverUrl}/api/projects/${p}/tasks/${t}/answer`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ body: 'again' }) });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(`task ${t} has no open question`);
    expect(messages(c.workers[0].root, p, t)).toHaveLength(before);
  });

  it('a threaded task (thread_parent) runs on a worker; the link on the parent is written once by the parent’s worker', async () => {
    const p = 'writes';
    const parent = 'task-20260101-000000-ask01';
    const worker = c.workers[0];
    const question = messages(c.server.root, p, parent).find((m) => m.type === 'QUESTION')!;
    const child = 'task-20260101-000000-thrd1';
    const res = await fetch(`${c.serverUrl}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: p, task_id: child, agent_type: 'codex', prompt: 'follow up\n', thread_parent: { project_id: p, task_id: parent, run_id: question.run_id, message_id: question.msg_id } }),
    });
    expect(res.status).toBe(201);
    const { run_id: childRun } = (await res.json()) as { run_id: string };
    // the parent's link was confirmed by its worker before the answer
    const links = messages(worker.root, p, parent).filter((m) => m.type === 'USER_REQUEST' && m.meta?.thread_child_task_id === child);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ run_id: question.run_id, parents: [{ msg_id: question.msg_id, kind: 'thread_answer' }] });
    expect(links[0].meta).toMatchObject({ thread_direction: 'source_task', thread_child_run_id: childRun, thread_source_message_id: question.msg_id });

    await waitFor('the child DONE on the replica', () => existsSync(join(c.server.root, p, child, 'DONE')), 60_000);
    // the child ran on the worker, which wrote its link file and its USER_REQUEST under the id the parent names
    expect(readdirSync(join(worker.root, p, child, 'runs'))).toEqual([childRun]);
    expect(readFileSync(join(worker.root, p, child, 'TASK-THREAD-LINK.yaml'), 'utf8')).toMatch(new RegExp(`^parent_project_id: ${p}\nparent_task_id: ${parent}\nparent_run_id: ${question.run_id}\nparent_message_id: ${question.msg_id}\nparent_message_type: QUESTION\nlinked_at: \\S+\n$`));
    const requests = messages(worker.root, p, child).filter((m) => m.type === 'USER_REQUEST');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ msg_id: links[0].meta!.thread_child_message_id, run_id: childRun, body: 'follow up\n' });
    expect(requests[0].meta).toMatchObject({ thread_direction: 'child_task', thread_parent_message_id: question.msg_id });
    // both come back to the replica once, byte-identical
    await waitFor('the replica to match the worker', () => replicaDiff(worker.root, c.server.root, p).length === 0, 20_000).catch(() => undefined);
    expect(replicaDiff(worker.root, c.server.root, p)).toEqual([]);
    expect(messages(c.server.root, p, parent).filter((m) => m.meta?.thread_child_task_id === child)).toHaveLength(1);
  });

  it('a project-bus post from the server reaches the replica and the workers\' copies through the change stream, once', async () => {
    const p = 'writes';
    const res = await fetch(`${c.serverUrl}/api/v1/messages`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: p, type: 'FACT', body: 'a project-wide note' }),
    });
    expect(res.status).toBe(201);
    const { msg_id } = (await res.json()) as { msg_id: string };
    // readable right after the post, stored once
    const projectBus = join(c.server.root, p, 'PROJECT-MESSAGE-BUS.md');
    expect(parseBus(readFileSync(projectBus)).filter((m) => m.msg_id === msg_id)).toEqual([expect.objectContaining({ type: 'FACT', body: 'a project-wide note', project_id: p })]);
    const listed = (await (await fetch(`${c.serverUrl}/api/v1/messages?project_id=${p}`)).json()) as { messages: { msg_id: string }[] };
    expect(listed.messages.map((m) => m.msg_id)).toContain(msg_id);
    // it came through NATS as a record of the server host, not as a local write
    const link = await connectNats(c.nats.url, 'test-observer');
    try {
      const rec = await link.jsm.streams.getMessage(CHANGES_STREAM, { last_by_subj: `conductor.changes._server.${p}._project` });
      expect(Buffer.from(rec!.data).toString('utf8')).toContain(`msg_id: ${msg_id}\n`);
    } finally {
      await link.close();
    }
    // the worker's copy of the project bus (its agents read it) gets it too, once; coming back
    // from the worker's tailer it is not appended to the replica again
    const ids = (root: string) => parseBus(readFileSync(join(root, p, 'PROJECT-MESSAGE-BUS.md'))).map((m) => m.msg_id);
    const worker = c.workers[0];
    await waitFor('the post on the worker\'s project bus', () => ids(worker.root).includes(msg_id), 15_000);
    await waitFor('the worker\'s copy and the replica to hold the same project-bus messages', () => ids(c.server.root).length === ids(worker.root).length, 15_000).catch(() => undefined);
    expect(ids(worker.root).filter((id) => id === msg_id)).toHaveLength(1);
    expect(ids(c.server.root).filter((id) => id === msg_id)).toHaveLength(1);
    expect([...ids(c.server.root)].sort()).toEqual([...ids(worker.root)].sort());
  });

  it('a stop waiting out its grace period does not hold up a write to another task on the same worker', async () => {
    const p = 'writes';
    const [slow, other] = ['task-20260101-000000-slow1', 'task-20260101-000000-othr1'];
    const worker = c.workers[0];
    // an agent that ignores SIGTERM (it ends by itself after 20 s): its stop waits the 30 s grace
    const { run_id: slowRun } = await c.submit(p, slow, { FAKE_AGENT_SLEEP_MS: '20000', FAKE_AGENT_IGNORE_SIGTERM: '1', FAKE_AGENT_LINES: '1' });
    await c.submit(p, other, { FAKE_AGENT_SLEEP_MS: '20000' });
    const slowDir = join(worker.root, p, slow, 'runs', slowRun);
    // the agent printed its first line: its SIGTERM handler is in place
    await waitFor('the slow agent started on the worker', () => existsSync(join(slowDir, 'agent-stdout.txt')) && statSync(join(slowDir, 'agent-stdout.txt')).size > 0, 60_000);
    const replicated = join(c.server.root, p, slow, 'runs', slowRun, 'run-info.yaml');
    await waitFor('the slow run replicated as running', () => existsSync(replicated) && readRunInfo(replicated).status === 'running', 30_000);
    await waitFor('the other task on the worker', () => existsSync(join(worker.root, p, other, 'TASK.md')) && existsSync(join(c.server.root, p, other, 'TASK.md')), 30_000);

    expect((await fetch(`${c.serverUrl}/api/v1/runs/${slowRun}/stop`, { method: 'POST' })).status).toBe(202);
    await waitFor('the stop applied on the worker (SIGTERM sent, grace running)', () => existsSync(join(worker.root, p, slow, 'runs', slowRun, 'STOPPED-BY')), 15_000);
    const post = await fetch(`${c.serverUrl}/api/v1/messages`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: p, task_id: other, body: 'while the other task stops' }),
    });
    expect(post.status).toBe(201);
    const { msg_id } = (await post.json()) as { msg_id: string };
    expect(messages(worker.root, p, other).some((m) => m.msg_id === msg_id)).toBe(true);
  });
});
