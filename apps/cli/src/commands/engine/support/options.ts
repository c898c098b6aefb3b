/** The flag value parsers live in @app/runner (flag-values.ts): one wording of their usage errors. */
export { countFlag, durationFlag } from '@app/runner';

/** Repeatable string flags collect their values. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
