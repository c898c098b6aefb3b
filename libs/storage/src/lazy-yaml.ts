/**
 * The `yaml` package, loaded on first use: loading it costs ~4 ms, which the hot commands skip
 * (they read our own records with small hand-written readers, and the YAML files they look at,
 * such as a task's settings or worktree record, usually do not exist). Libs parse and write YAML
 * through these two functions; only the config loader, which needs the document API, imports
 * `yaml` itself (test/arch/imports.spec.ts; docs/decisions/startup-and-memory.md).
 */
import type { CreateNodeOptions, DocumentOptions, ParseOptions, SchemaOptions, ToJSOptions, ToStringOptions } from 'yaml';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = (): typeof import('yaml') => require('yaml') as typeof import('yaml');

export function parseYaml(text: string, options: ParseOptions & DocumentOptions & SchemaOptions & ToJSOptions = {}): unknown {
  return yaml().parse(text, options) as unknown;
}

export function stringifyYaml(value: unknown, options: DocumentOptions & SchemaOptions & ParseOptions & CreateNodeOptions & ToStringOptions = {}): string {
  return yaml().stringify(value, options);
}
