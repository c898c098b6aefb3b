import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveNatsAuth } from '@app/scaleout';

describe('resolveNatsAuth (the one validator of the NATS credential flags)', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nats-auth-'));
    file = join(dir, 'user.creds');
    writeFileSync(file, 'creds');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes a token from the flag, else from CONDUCTOR_NATS_TOKEN', () => {
    expect(resolveNatsAuth({ natsToken: 'a' }, { CONDUCTOR_NATS_TOKEN: 'b' })).toEqual({ token: 'a' });
    expect(resolveNatsAuth({}, { CONDUCTOR_NATS_TOKEN: 'b' })).toEqual({ token: 'b' });
    expect(resolveNatsAuth({}, {})).toEqual({});
  });

  it('takes user and password (the password may come from CONDUCTOR_NATS_PASSWORD)', () => {
    expect(resolveNatsAuth({ natsUser: 'u', natsPassword: 'p' }, {})).toEqual({ user: 'u', password: 'p' });
    expect(resolveNatsAuth({ natsUser: 'u' }, { CONDUCTOR_NATS_PASSWORD: 'q' })).toEqual({ user: 'u', password: 'q' });
  });

  it('takes a creds file and TLS files that exist', () => {
    expect(resolveNatsAuth({ natsCreds: file, natsTlsCa: file, natsTlsCert: file, natsTlsKey: file }, {})).toEqual({ credsFile: file, tlsCaFile: file, tlsCertFile: file, tlsKeyFile: file });
  });

  it.each([
    [{ natsToken: 't', natsUser: 'u', natsPassword: 'p' }, 'choose one NATS authentication: --nats-token, --nats-user/--nats-password or --nats-creds (got a token and a user)'],
    [{ natsToken: '  ' }, '--nats-token is empty'],
    [{ natsUser: 'u' }, '--nats-user needs --nats-password (or CONDUCTOR_NATS_PASSWORD)'],
    [{ natsPassword: 'p' }, '--nats-password needs --nats-user'],
    [{ natsTlsCert: 'x' }, '--nats-tls-cert and --nats-tls-key go together'],
    [{ natsCreds: '/nonexistent/user.creds' }, '--nats-creds "/nonexistent/user.creds": not a readable file'],
    [{ natsTlsCa: '/' }, '--nats-tls-ca "/": not a readable file'],
  ])('refuses %j in one line', (flags, message) => {
    expect(() => resolveNatsAuth(flags, {})).toThrow(message);
  });
});
