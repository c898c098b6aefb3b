import { CommandRunner, Option } from 'nest-commander';

/**
 * The NATS credentials and TLS flags of `conductor --nats` and `run-agent worker` (docs/scale-out.md),
 * declared once and inherited (nest-commander reads the decorators of a base class); the values go to
 * resolveNatsAuth of @app/scaleout.
 */
export abstract class NatsAuthOptionParsers extends CommandRunner {
  @Option({ flags: '--nats-token <token>', description: 'NATS authentication token (default $CONDUCTOR_NATS_TOKEN)' })
  parseNatsToken(value: string): string {
    return value;
  }

  @Option({ flags: '--nats-user <user>', description: 'NATS user (with --nats-password or $CONDUCTOR_NATS_PASSWORD)' })
  parseNatsUser(value: string): string {
    return value;
  }

  @Option({ flags: '--nats-password <password>', description: 'NATS password (default $CONDUCTOR_NATS_PASSWORD)' })
  parseNatsPassword(value: string): string {
    return value;
  }

  @Option({ flags: '--nats-creds <file>', description: 'NATS credentials file (user JWT and nkey seed)' })
  parseNatsCreds(value: string): string {
    return value;
  }

  @Option({ flags: '--nats-tls-ca <file>', description: "CA certificate of the NATS server's TLS certificate (turns TLS on)" })
  parseNatsTlsCa(value: string): string {
    return value;
  }

  @Option({ flags: '--nats-tls-cert <file>', description: 'client certificate for NATS mutual TLS (with --nats-tls-key)' })
  parseNatsTlsCert(value: string): string {
    return value;
  }

  @Option({ flags: '--nats-tls-key <file>', description: 'client key for NATS mutual TLS (with --nats-tls-cert)' })
  parseNatsTlsKey(value: string): string {
    return value;
  }
}
