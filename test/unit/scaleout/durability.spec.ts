import { decodeClaim, syncNote } from '@app/scaleout';

describe('JetStream durability note (issue #31)', () => {
  it('names the missing sync_interval before nats-server 2.10', () => {
    expect(syncNote('2.9.10')).toMatch(/nats-server 2\.9\.10 has no sync_interval \(2\.10\+\); it fsyncs every 2 minutes/);
  });
  it('asks for sync_interval: always from 2.10 on (a client cannot read it)', () => {
    expect(syncNote('2.10.0')).toMatch(/make sure nats-server 2\.10\.0 runs with jetstream \{ sync_interval: always \}/);
    expect(syncNote('3.0.1')).toMatch(/sync_interval: always/);
  });
  it('says so for an unknown version', () => {
    expect(syncNote(undefined)).toMatch(/unknown nats-server version/);
  });
});

describe('task claims', () => {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o));
  it('reads a claim with its sequence', () => {
    expect(decodeClaim(enc({ host: 'w1', leaseMs: 3000 }), 7)).toEqual({ host: 'w1', leaseMs: 3000, released: false, seq: 7 });
    expect(decodeClaim(enc({ host: 'w1', leaseMs: 3000, released: true }), 8).released).toBe(true);
  });
  it('an unreadable claim is a claim of no host (nobody heartbeats for it: taken over after a lease)', () => {
    for (const bad of [Buffer.from('{'), enc({ host: 'W 1', leaseMs: 3000 }), enc({ host: 'w1', leaseMs: 0 }), enc({ host: 'w1' })]) {
      expect(decodeClaim(bad, 3)).toEqual({ host: '', leaseMs: 1, seq: 3 });
    }
  });
});
