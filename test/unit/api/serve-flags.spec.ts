import { SERVE_FLAGS, serveFlagsFromArgv } from '@app/boot';

describe('serveFlagsFromArgv (the launcher’s parse of the serve flags)', () => {
  it('takes the command lines that start the server', () => {
    expect(serveFlagsFromArgv('conductor', [])).toEqual({});
    expect(serveFlagsFromArgv('conductor', ['--port', '0', '--root=/r'])).toEqual({ port: '0', root: '/r' });
    expect(serveFlagsFromArgv('conductor', ['serve', '--disable-task-start'])).toEqual({ disableTaskStart: true });
    expect(serveFlagsFromArgv('run-agent', ['serve', '--nats', 'nats://h', '--nats-tls-ca', 'ca.pem', '--insecure-no-auth'])).toEqual({ nats: 'nats://h', natsTlsCa: 'ca.pem', insecureNoAuth: true });
  });

  it('keys every flag as commander does, and a value may start with a dash', () => {
    expect(serveFlagsFromArgv('run-agent', ['serve', '--port', '-1', '--watchdog-max-failures', '5', '--port', '7'])).toEqual({ port: '7', watchdogMaxFailures: '5' });
    expect(Object.keys(SERVE_FLAGS)).toContain('watchdogInterval');
    expect(serveFlagsFromArgv('run-agent', ['serve', '--watchdog-interval', '1s', '--api-key', 'k', '--config', 'c.yaml', '--host', '::1'])).toEqual({ watchdogInterval: '1s', apiKey: 'k', config: 'c.yaml', host: '::1' });
  });

  it('leaves other commands, --help and usage errors to the CLI', () => {
    for (const [program, argv] of [
      ['run-agent', []],
      ['run-agent', ['--port', '0']],
      ['run-agent', ['status']],
      ['conductor', ['status']],
      ['conductor', ['--version']],
      ['conductor', ['--help']],
      ['run-agent', ['serve', '-h']],
      ['run-agent', ['serve', '--bogus']],
      ['run-agent', ['serve', '--port']],
      ['run-agent', ['serve', 'extra']],
      ['conductor', ['--disable-task-start=yes']],
    ] as const) {
      expect([program, argv, serveFlagsFromArgv(program, [...argv])]).toEqual([program, argv, undefined]);
    }
  });
});
