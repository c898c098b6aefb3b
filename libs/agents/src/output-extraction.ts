import { copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_OUTPUT_FILE as OUTPUT_FILE, RUN_STDERR_FILE as STDERR_FILE, RUN_STDOUT_FILE as STDOUT_FILE } from '@app/storage';
import { parseClaudeStream } from './parsers/claude';
import { parseCodexStream } from './parsers/codex';
import { parseGeminiStream } from './parsers/gemini';
import { readFileLines } from './parsers/lines';

export const CLAUDE_PLACEHOLDER_OUTPUT =
  '# Agent Output\n\n*The agent did not write output.md. Raw output is available in the stdout tab.*\n';
export const GEMINI_FLAG_REJECTED_SUMMARY = 'gemini CLI rejected --output-format stream-json';

const GEMINI_FLAG_REJECTION_WORDS = ['unknown flag', 'unrecognized option', 'output-format', 'stream-json', 'invalid flag'];

export interface OutputExtraction {
  /**
   * kept: the agent wrote output.md itself; parsed: written from the stream; placeholder: claude
   * stream had no text; unparsed: nothing written (the stdout copy fallback applies later).
   */
  outcome: 'kept' | 'parsed' | 'placeholder' | 'unparsed';
  /** Gemini printed nothing parseable and its stderr shows it rejected the stream-json flags. */
  geminiFlagRejected: boolean;
}

/**
 * Writes `<runDir>/output.md` from the agent's stream (runner-agents.md §2.5 step 9) unless the
 * agent already wrote one. When `geminiFlagRejected` is set the runner must record exit code 1,
 * status failed and {@link GEMINI_FLAG_REJECTED_SUMMARY}, even if the process exited 0.
 */
export function extractOutput(agentType: string, runDir: string): OutputExtraction {
  const outputPath = join(runDir, OUTPUT_FILE);
  if (existsSync(outputPath)) return { outcome: 'kept', geminiFlagRejected: false };
  const stdoutPath = join(runDir, STDOUT_FILE);
  const type = agentType.trim().toLowerCase();
  const parser = type === 'claude' ? parseClaudeStream : type === 'codex' ? parseCodexStream : type === 'gemini' ? parseGeminiStream : undefined;
  if (!parser) return { outcome: 'unparsed', geminiFlagRejected: false };

  const text = existsSync(stdoutPath) ? parser(readFileLines(stdoutPath)) : undefined;
  if (text !== undefined) {
    writeFileSync(outputPath, text, { mode: 0o644 });
    return { outcome: 'parsed', geminiFlagRejected: false };
  }
  if (type === 'claude') {
    writeFileSync(outputPath, CLAUDE_PLACEHOLDER_OUTPUT, { mode: 0o644 });
    return { outcome: 'placeholder', geminiFlagRejected: false };
  }
  const flagRejected = type === 'gemini' && isGeminiFlagRejection(readIfExists(join(runDir, STDERR_FILE)));
  return { outcome: 'unparsed', geminiFlagRejected: flagRejected };
}

export function isGeminiFlagRejection(stderr: string): boolean {
  const lower = stderr.toLowerCase();
  return GEMINI_FLAG_REJECTION_WORDS.some((word) => lower.includes(word));
}

/**
 * Final fallback (§2.5 step 11, §2.6 step 3): when output.md is still missing, copy the stdout
 * file to it verbatim. Throws when output.md is a directory.
 */
export function ensureOutputFile(runDir: string): 'existing' | 'copied' | 'no-stdout' {
  const outputPath = join(runDir, OUTPUT_FILE);
  if (existsSync(outputPath)) {
    if (statSync(outputPath).isDirectory()) throw new Error('output.md is a directory');
    return 'existing';
  }
  const stdoutPath = join(runDir, STDOUT_FILE);
  if (!existsSync(stdoutPath)) return 'no-stdout';
  // copied beside it and renamed: a reader (or a crash) never sees half an output.md
  const partial = `${outputPath}.partial-${process.pid}`;
  copyFileSync(stdoutPath, partial);
  renameSync(partial, outputPath);
  return 'copied';
}

/** run-info `error_summary` of a failed CLI run (§2.5 step 8). */
export function errorSummaryForExit(exitCode: number, timedOut = false): string {
  if (timedOut) return 'timed out';
  switch (exitCode) {
    case 1:
      return 'agent reported failure';
    case 2:
      return 'agent usage error';
    case 137:
      return 'agent killed (OOM or signal)';
    case 143:
      return 'agent terminated (SIGTERM)';
    default:
      return `agent exited with code ${exitCode}`;
  }
}

function readIfExists(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
