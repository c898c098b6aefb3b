import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusError, BusWriter, MAX_TYPE_LENGTH, prepareMessage, validateHeaderFields, validateMessageType } from '@app/messagebus';
import { tempDir } from './tmp';

const ok = { type: 'FACT', project_id: 'p', task_id: 'task-20260101-120000-abc', run_id: '20260101-1200000000-1-1' };

function refused(input: object): string {
  try {
    validateHeaderFields(input);
  } catch (err) {
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('INVALID_MESSAGE');
    expect((err as BusError).message).not.toMatch(/[\n\r]/);
    return (err as BusError).message;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('bus header validation (issue #10 item 3)', () => {
  it('accepts ordinary messages, including the runner’s propagation shape', () => {
    expect(() => validateHeaderFields(ok)).not.toThrow();
    expect(() =>
      validateHeaderFields({
        ...ok,
        type: 'needs-input:v1',
        issue_id: 'MSG-20260101-120000-000000001-PID00001-0001',
        parents: [{ msg_id: 'MSG-20260101-120000-000000001-PID00001-0001', kind: 'source_fact', meta: { project_id: 'p' } }],
        links: [{ url: '/runs/p/some dir/TASK-MESSAGE-BUS.md', label: 'task message bus', kind: 'task_bus' }],
        meta: { source_task_dir: '/runs/p/t', source_run_ids: 'a,b', empty: '' },
      }),
    ).not.toThrow();
    expect(validateMessageType(' FACT ')).toBe('FACT');
  });

  it('refuses control characters, unsafe names and overlong values in every field', () => {
    expect(refused({ ...ok, type: 'X\n---\nmsg_id: evil' })).toMatch(/^invalid message type "X\\n---\\nmsg_id: evil"/);
    expect(refused({ ...ok, type: 'T'.repeat(MAX_TYPE_LENGTH + 1) })).toBe('message type is 65 characters long, over the 64-character limit');
    expect(refused({ ...ok, type: 'has space' })).toMatch(/^invalid message type/);
    expect(refused({ ...ok, type: '' })).toBe('message type is empty');
    expect(refused({ ...ok, project_id: '' })).toBe('project id is empty');
    expect(refused({ ...ok, project_id: 'p\n' })).toMatch(/^invalid project id/);
    expect(refused({ ...ok, task_id: 't\rx' })).toMatch(/^invalid task id/);
    expect(refused({ ...ok, run_id: 'r'.repeat(129) })).toBe('run id is 129 characters long, over the 128-character limit');
    expect(refused({ ...ok, issue_id: 'a b' })).toMatch(/^invalid issue id/);
    expect(refused({ ...ok, parents: [{ msg_id: 'M\nx' }] })).toMatch(/^invalid parent\[0\] msg_id/);
    expect(refused({ ...ok, parents: [{ msg_id: 'M', kind: 'a\u001b' }] })).toMatch(/^invalid parent\[0\] kind/);
    expect(refused({ ...ok, parents: [{ msg_id: 'M', meta: { k: 'v\nmsg_id: x' } }] })).toBe('parent[0] meta.k must be one line without control characters');
    expect(refused({ ...ok, links: [{ url: 'a\u2028b' }] })).toBe('link[0] url must be one line without control characters');
    expect(refused({ ...ok, links: [{ url: ' ' }] })).toBe('link[0] url is empty');
    expect(refused({ ...ok, links: [{ url: 'u', label: 'l'.repeat(257) }] })).toMatch(/over the 256-character limit/);
    expect(refused({ ...ok, meta: { 'bad key': 'v' } })).toMatch(/^invalid meta key/);
    expect(refused({ ...ok, meta: { k: 'x'.repeat(4097) } })).toMatch(/over the 4096-character limit/);
    expect(refused({ ...ok, links: Array.from({ length: 65 }, () => ({ url: 'u' })) })).toBe('link has 65 entries, over the limit of 64');
  });

  it('is the door of every writer: a refused append leaves the bus byte-identical', async () => {
    const { dir, cleanup } = tempDir('hdr-');
    try {
      const bus = join(dir, 'TASK-MESSAGE-BUS.md');
      writeFileSync(bus, '');
      const writer = new BusWriter(bus);
      await writer.append({ ...ok, body: 'first' });
      const before = readFileSync(bus);
      await expect(writer.append({ ...ok, type: 'X\n---\nmsg_id: evil', body: 'b' })).rejects.toThrow(/invalid message type/);
      await expect(writer.append({ ...ok, meta: { k: 'a\nb' }, body: 'b' })).rejects.toThrow(/meta.k/);
      writer.close();
      expect(readFileSync(bus)).toEqual(before);
      expect(() => prepareMessage({ ...ok, type: 'A\u0000', body: '' })).toThrow(BusError);
      expect(prepareMessage({ ...ok, type: ' FACT ', body: '' }).msg.type).toBe('FACT');
    } finally {
      cleanup();
    }
  });
});
