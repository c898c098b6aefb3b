/**
 * Delivery ids, timestamps and Standard Webhooks signatures (#29), checked with the maintained
 * `standardwebhooks` library; redirects are not followed. Real HTTP receivers on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { deliverWebhook, observeWebhookFailures, type WebhookFailure } from '@app/webhook';
import { loadConfig } from '@app/storage';
import { webhookReceiver, type WebhookReceiver } from '../../utils/webhook-receiver';

const payload = { event: 'run_stop', project_id: 'p', task_id: 'task-20260101-000000-hdr', run_id: 'r1' };
const warnings: string[] = [];
const bus = { append: async (m: { body: string }) => void warnings.push(m.body) };
const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

describe('webhook delivery headers', () => {
  const receivers: WebhookReceiver[] = [];
  const receiver = async (statuses: number[] = [], headers: Record<string, string> = {}) => {
    const r = await webhookReceiver(statuses, headers);
    receivers.push(r);
    return r;
  };
  beforeEach(() => (warnings.length = 0));
  afterAll(async () => Promise.all(receivers.map((r) => r.close())));

  it('signs every attempt in the Standard Webhooks form under one webhook-id, beside X-Conductor-Signature', async () => {
    const whsec = secret();
    const hook = await receiver([500, 503]);
    const ok = await deliverWebhook({ url: hook.url, secret: 'plain', standard_webhooks_secret: whsec }, payload, bus, { backoffMs: [1, 1] });
    expect(ok).toBe(true);
    expect(hook.received.map((r) => r.answered)).toEqual([500, 503, 200]);
    const ids = new Set(hook.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^msg_[0-9a-f]{32}$/);
    const wh = new Webhook(whsec);
    for (const r of hook.received) {
      expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThan(1_700_000_000);
      expect(r.headers['x-conductor-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(wh.verify(r.body, r.headers as Record<string, string>)).toEqual(payload);
    }
    // another secret does not verify
    expect(() => new Webhook(secret()).verify(hook.received[0].body, hook.received[0].headers as Record<string, string>)).toThrow();
    // each delivery has its own id
    await deliverWebhook({ url: hook.url }, payload, bus);
    expect(hook.received[3].headers['webhook-id']).not.toBe(hook.received[0].headers['webhook-id']);
  });

  it('sends the id and timestamp unsigned without a Standard Webhooks secret', async () => {
    const hook = await receiver();
    expect(await deliverWebhook({ url: hook.url }, payload, bus)).toBe(true);
    const [r] = hook.received;
    expect(r.headers['webhook-id']).toMatch(/^msg_/);
    expect(r.headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(r.headers['webhook-signature']).toBeUndefined();
    expect(r.headers['x-conductor-signature']).toBeUndefined();
  });

  it('does not follow a redirect: one attempt, nothing sent to the target, a WARN and a failure report', async () => {
    const target = await receiver();
    const redirecting = await receiver([307, 307, 307], { Location: target.url });
    const failures: WebhookFailure[] = [];
    const stop = observeWebhookFailures((f) => failures.push(f));
    try {
      expect(await deliverWebhook({ url: `${redirecting.url}?token=t0p`, standard_webhooks_secret: secret() }, payload, bus, { backoffMs: [1, 1] })).toBe(false);
    } finally {
      stop();
    }
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
    expect(warnings).toEqual(['webhook delivery failed: webhook delivery failed after 1 attempt: redirect (status 307) not followed']);
    expect(failures).toEqual([
      { ...payload, delivery_id: redirecting.received[0].headers['webhook-id'], receiver: new URL(redirecting.url).origin, attempts: 1, error: 'redirect (status 307) not followed' },
    ]);
  });

  it('reads webhook.standard_webhooks_secret from the config and refuses one that is not whsec_<base64 of 24-64 bytes>', () => {
    const dir = mkdtempSync(join(tmpdir(), 'whsec-config-'));
    try {
      const file = join(dir, 'config.yaml');
      const good = secret();
      writeFileSync(file, `agents:\n  a:\n    type: command\n    command: /bin/true\nwebhook:\n  url: http://127.0.0.1:9/hook\n  standard_webhooks_secret: ${good}\n`);
      expect(loadConfig(file).webhook?.standard_webhooks_secret).toBe(good);
      for (const bad of ['s3cret', 'whsec_c2hvcnQ=', `whsec_${randomBytes(32).toString('base64')}!`]) {
        writeFileSync(file, `agents:\n  a:\n    type: command\n    command: /bin/true\nwebhook:\n  url: http://127.0.0.1:9/hook\n  standard_webhooks_secret: "${bad}"\n`);
        expect(() => loadConfig(file)).toThrow(': webhook.standard_webhooks_secret: must be whsec_ followed by the base64 of 24 to 64 bytes');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
