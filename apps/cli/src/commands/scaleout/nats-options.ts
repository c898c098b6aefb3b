import { CommandRunner, Option } from 'nest-commander';
import { NATS_AUTH_FLAGS } from '@app/boot';

/**
 * The NATS credentials and TLS flags of `conductor --nats` and `run-agent worker` (docs/scale-out.md),
 * declared once and inherited (nest-commander reads the decorators of a base class); the values go to
 * resolveNatsAuth of @app/scaleout. The flags are defined in libs/boot/src/serve-flags.ts.
 */
export abstract class NatsAuthOptionParsers extends CommandRunner {
  @Option(NATS_AUTH_FLAGS.natsToken) parseNatsToken(value: string): string {
    return value;
  }

  @Option(NATS_AUTH_FLAGS.natsUser) parseNatsUser(value: string): string {
    return value;
  }

  @Option(NATS_AUTH_FLAGS.natsPassword) parseNatsPassword(value: string): string {
    return value;
  }

  @Option(NATS_AUTH_FLAGS.natsCreds) parseNatsCreds(value: string): string {
    return value;
  }

  @Option(NATS_AUTH_FLAGS.natsTlsCa) parseNatsTlsCa(value: string): string {
    return value;
  }

  @Option(NATS_AUTH_FLAGS.natsTlsCert) parseNatsTlsCert(value: string): string {
    return value;
  }

  @Option(NATS_AUTH_FLAGS.natsTlsKey) parseNatsTlsKey(value: string): string {
    return value;
  }
}
