import { readFileSync, statSync } from 'node:fs';
import type { ConnectionOptions } from '@nats-io/nats-core';
import { ScaleoutError } from './subjects';

/** How `conductor --nats` and `run-agent worker` authenticate to NATS (docs/scale-out.md). */
export interface NatsAuth {
  token?: string;
  user?: string;
  password?: string;
  /** A NATS `.creds` file (user JWT + nkey seed). */
  credsFile?: string;
  /** CA certificate that signed the NATS server's certificate (turns TLS on). */
  tlsCaFile?: string;
  /** Client certificate and key, for servers that verify clients (mutual TLS). */
  tlsCertFile?: string;
  tlsKeyFile?: string;
}

/** The CLI flags of both commands (camel-cased by nest-commander). */
export interface NatsAuthFlags {
  natsToken?: string;
  natsUser?: string;
  natsPassword?: string;
  natsCreds?: string;
  natsTlsCa?: string;
  natsTlsCert?: string;
  natsTlsKey?: string;
}

const bad = (message: string) => new ScaleoutError('NATS', message);

function readableFile(path: string | undefined, flag: string): string | undefined {
  if (path === undefined) return undefined;
  try {
    if (statSync(path).isFile()) return path;
  } catch {
    // reported below
  }
  throw bad(`${flag} "${path}": not a readable file`);
}

/**
 * The one validator of the NATS credentials flags. Secrets may come from the environment
 * (CONDUCTOR_NATS_TOKEN, CONDUCTOR_NATS_PASSWORD) so they stay out of `ps`; a flag wins.
 */
export function resolveNatsAuth(flags: NatsAuthFlags, env: NodeJS.ProcessEnv = process.env): NatsAuth {
  const token = flags.natsToken ?? (env.CONDUCTOR_NATS_TOKEN || undefined);
  const password = flags.natsPassword ?? (env.CONDUCTOR_NATS_PASSWORD || undefined);
  const user = flags.natsUser;
  const methods = [token !== undefined && 'a token', user !== undefined && 'a user', flags.natsCreds !== undefined && 'a creds file'].filter(Boolean);
  if (methods.length > 1) throw bad(`choose one NATS authentication: --nats-token, --nats-user/--nats-password or --nats-creds (got ${methods.join(' and ')})`);
  if (token !== undefined && token.trim() === '') throw bad('--nats-token is empty');
  if (user !== undefined && password === undefined) throw bad('--nats-user needs --nats-password (or CONDUCTOR_NATS_PASSWORD)');
  if (flags.natsPassword !== undefined && user === undefined) throw bad('--nats-password needs --nats-user');
  if ((flags.natsTlsCert === undefined) !== (flags.natsTlsKey === undefined)) throw bad('--nats-tls-cert and --nats-tls-key go together');
  const auth: NatsAuth = {
    token,
    user,
    password: user === undefined ? undefined : password,
    credsFile: readableFile(flags.natsCreds, '--nats-creds'),
    tlsCaFile: readableFile(flags.natsTlsCa, '--nats-tls-ca'),
    tlsCertFile: readableFile(flags.natsTlsCert, '--nats-tls-cert'),
    tlsKeyFile: readableFile(flags.natsTlsKey, '--nats-tls-key'),
  };
  for (const k of Object.keys(auth) as (keyof NatsAuth)[]) if (auth[k] === undefined) delete auth[k];
  return auth;
}

/** The client's connection options for `auth` (the creds file is read at every (re)connect). */
export function connectionAuth(auth: NatsAuth | undefined, credsAuthenticator: (creds: () => Uint8Array) => ConnectionOptions['authenticator']): Partial<ConnectionOptions> {
  if (!auth) return {};
  const opts: Partial<ConnectionOptions> = {};
  if (auth.token !== undefined) opts.token = auth.token;
  if (auth.user !== undefined) {
    opts.user = auth.user;
    opts.pass = auth.password;
  }
  if (auth.credsFile !== undefined) {
    const file = auth.credsFile;
    opts.authenticator = credsAuthenticator(() => readFileSync(file));
  }
  if (auth.tlsCaFile !== undefined || auth.tlsCertFile !== undefined) {
    opts.tls = { caFile: auth.tlsCaFile, certFile: auth.tlsCertFile, keyFile: auth.tlsKeyFile };
  }
  return opts;
}
