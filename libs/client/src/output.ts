import { UsageError } from '@app/boot';

/** Flags every client command has (`--server`, `--json`, `--api-key`). */
export interface ClientOptions {
  server?: string;
  json?: boolean;
  apiKey?: string;
}

/** Client commands that take `--project`. */
export interface ProjectOptions extends ClientOptions {
  project?: string;
}

export function out(text: string): void {
  process.stdout.write(text);
}

/** Prints a raw JSON body as upstream does: trimmed, one trailing newline. */
export function printRaw(text: string): void {
  out(`${text.trim()}\n`);
}

export function requireFlag(value: string | undefined, flag: string): string {
  if (!value || value.trim() === '') throw new UsageError(`required flag(s) "${flag}" not set`);
  return value;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function parseIntFlag(value: string, flag: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new UsageError(`invalid argument "${value}" for "--${flag}" flag: expected an integer`);
  return Number(value);
}

export function oneArg(args: string[], what = 'task-id'): string {
  if (args.length !== 1) throw new UsageError(`accepts 1 arg(s) (<${what}>), received ${args.length}`);
  return args[0];
}
