import { closeSync, openSync, writeSync } from 'node:fs';

/** The stdout/stderr files of a REST run, truncated on open (runner-agents.md §2.6). */
export class RunOutputFiles {
  private readonly stdoutFd: number;
  private readonly stderrFd: number;

  constructor(stdoutPath: string, stderrPath: string, private readonly echo?: (text: string) => void) {
    this.stdoutFd = openSync(stdoutPath, 'w', 0o644);
    try {
      this.stderrFd = openSync(stderrPath, 'w', 0o644);
    } catch (err) {
      closeSync(this.stdoutFd);
      throw err;
    }
  }

  stdout(text: string): void {
    if (text === '') return;
    writeSync(this.stdoutFd, text);
    this.echo?.(text);
  }

  stderr(text: string): void {
    if (text !== '') writeSync(this.stderrFd, text);
  }

  close(): void {
    closeSync(this.stdoutFd);
    closeSync(this.stderrFd);
  }
}

/** First non-blank value among `keys` in `env`, then in the process environment. */
export function lookupEnv(env: Record<string, string | undefined>, ...keys: string[]): string {
  for (const key of keys) {
    const fromRun = env[key]?.trim();
    if (fromRun) return fromRun;
    const fromProcess = process.env[key]?.trim();
    if (fromProcess) return fromProcess;
  }
  return '';
}
