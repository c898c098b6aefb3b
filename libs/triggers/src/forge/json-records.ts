import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';

/**
 * A folder of JSON records, one file each, written atomically. A damaged record is that record's
 * problem: reading it throws for it alone, and listings report it through `onBad` and skip it.
 */
export class JsonRecords<T> {
  constructor(
    private readonly dir: string,
    /** Checks a parsed record (throws naming `path` when it is damaged) and fills defaults. */
    private readonly check: (rec: T, path: string) => T,
  ) {}

  path(name: string): string {
    return join(this.dir, `${name}.json`);
  }

  read(name: string): T | undefined {
    const path = this.path(name);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return this.parse(text, path);
  }

  write(name: string, rec: T): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileAtomic(this.path(name), `${JSON.stringify(rec, null, 2)}\n`);
  }

  /**
   * Re-reads a record and writes `fn`'s change of it, in one synchronous step (nothing else of this
   * process runs between the read and the write), so concurrent handlers never lose each other's fields.
   */
  change(name: string, fn: (rec: T) => T): T | undefined {
    const rec = this.read(name);
    if (!rec) return undefined;
    const next = { ...fn(rec), updated_at: new Date().toISOString() };
    this.write(name, next);
    return next;
  }

  list(onBad?: (path: string, err: Error) => void): T[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const out: T[] = [];
    for (const name of names.sort()) {
      const path = join(this.dir, name);
      try {
        out.push(this.parse(readFileSync(path, 'utf8'), path));
      } catch (err) {
        onBad?.(path, err as Error);
      }
    }
    return out;
  }

  private parse(text: string, path: string): T {
    return this.check(JSON.parse(text) as T, path);
  }
}
