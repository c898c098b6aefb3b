import type { LoggerService } from '@nestjs/common';
import type { LogLevel } from '@app/storage';

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** Nest's own start-up chatter (module init, one line per mapped route): debug, not info. */
const FRAMEWORK_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** A structured log line's fields besides time, level and context: `msg` names the event. */
export interface LogFields {
  msg: string;
  [field: string]: unknown;
}

/**
 * The server's one logger: every `new Logger(context)` of the app and its libraries writes through
 * it (Nest's Logger.overrideLogger) as one JSON object per line on stderr:
 * `{"time","level","context","msg",...fields}`. A message may be a string or {@link LogFields}.
 * Nest's `log` is level `info`, `verbose` is `debug`, `fatal` is `error`.
 */
export class JsonLogger implements LoggerService {
  constructor(
    readonly level: LogLevel,
    private readonly write: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
  ) {}

  enabled(level: LogLevel): boolean {
    return RANK[level] <= RANK[this.level];
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.emit('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.emit('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.emit('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.emit('error', message, rest);
  }

  /** Nest passes `(message, [stack,] context)`: the context is the last string, a stack (error) before it. */
  private emit(level: LogLevel, message: unknown, rest: unknown[]): void {
    const params = [...rest];
    const context = params.length > 0 && typeof params[params.length - 1] === 'string' ? (params.pop() as string) : undefined;
    const effective = level === 'info' && context !== undefined && FRAMEWORK_CONTEXTS.has(context) ? 'debug' : level;
    if (!this.enabled(effective)) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level: effective };
    if (context !== undefined) entry.context = context;
    if (message instanceof Error) {
      entry.msg = message.message;
      entry.stack = message.stack;
    } else if (message !== null && typeof message === 'object') {
      const { msg, ...fields } = message as Partial<LogFields>;
      entry.msg = msg ?? '';
      Object.assign(entry, fields);
    } else {
      entry.msg = String(message);
    }
    if (typeof params[0] === 'string' && params[0] !== '') entry.stack ??= params[0];
    try {
      this.write(JSON.stringify(entry));
    } catch {
      // a field that does not serialize (a cycle) never takes the caller down
      this.write(JSON.stringify({ time: entry.time, level: effective, context, msg: String(entry.msg) }));
    }
  }
}
