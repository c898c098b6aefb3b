import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { type RunsLayout, TASK_BUS_FILE, rfc3339, validateProjectId, withFileLock, writeFileAtomic } from '@app/storage';

export const PROJECT_FACTS_FILE = 'PROJECT-FACTS.md';
const BODY_PREFIX = '- **Body**: ';
const HASH_PREFIX = '- **Body SHA-256**: ';
const CONTINUATION = '  ';

export interface PromoteFactsOptions {
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  projectId: string;
  dryRun?: boolean;
  /** Message type to promote (case-insensitive); default FACT. */
  filterType?: string;
  /** Messages older than this are skipped. */
  since?: Date;
  now?: Date;
}

export interface PromotedFact {
  taskId: string;
  body: string;
  timestamp: Date;
}

export interface PromoteFactsResult {
  path: string;
  promoted: PromotedFact[];
  alreadyPresent: number;
  written: boolean;
}

export function factHash(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * Hashes of the facts already in the file. A body is the text after `- **Body**: ` plus the
 * following two-space-indented continuation lines, so multi-line bodies are recognised whole
 * (upstream hashed only the first line and re-appended them on every run). Recorded
 * `Body SHA-256` lines count too.
 */
export function existingFactHashes(text: string): Set<string> {
  const hashes = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith(HASH_PREFIX)) {
      hashes.add(line.slice(HASH_PREFIX.length).trim());
      continue;
    }
    if (!line.startsWith(BODY_PREFIX)) continue;
    const body = [line.slice(BODY_PREFIX.length)];
    while (i + 1 < lines.length && lines[i + 1].startsWith(CONTINUATION)) body.push(lines[++i].slice(CONTINUATION.length));
    const joined = body.join('\n').trim();
    if (joined) hashes.add(factHash(joined));
  }
  return hashes;
}

function factTitle(body: string): string {
  const first = body.split('\n')[0];
  return first.length > 80 ? first.slice(0, 80) : first;
}

export function formatFactEntry(fact: PromotedFact, promotedAt: Date): string {
  const [first, ...rest] = fact.body.split('\n');
  return [
    '---',
    `## Fact: ${factTitle(fact.body)}`,
    `${BODY_PREFIX}${first}`,
    ...rest.map((l) => `${CONTINUATION}${l}`),
    `${HASH_PREFIX}${factHash(fact.body)}`,
    `- **Source task**: ${fact.taskId}`,
    `- **Original timestamp**: ${rfc3339(fact.timestamp)}`,
    `- **Promoted at**: ${rfc3339(promotedAt)}`,
    '---',
    '',
  ].join('\n');
}

function collectCandidates(projectDir: string, opts: PromoteFactsOptions): PromotedFact[] {
  const type = (opts.filterType ?? '').trim() || 'FACT';
  const found: PromotedFact[] = [];
  const tasks = readdirSync(projectDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const taskId of tasks) {
    const busPath = join(projectDir, taskId, TASK_BUS_FILE);
    if (!existsSync(busPath)) continue;
    let messages;
    try {
      messages = readMessages(busPath);
    } catch {
      continue; // unreadable bus: nothing to promote from it
    }
    for (const msg of messages) {
      if (msg.type.toUpperCase() !== type.toUpperCase()) continue;
      if (opts.since && msg.ts.getTime() < opts.since.getTime()) continue;
      const body = msg.body.replace(/\r\n/g, '\n').trim();
      if (body) found.push({ taskId, body, timestamp: msg.ts });
    }
  }
  return found;
}

/** Promotes task-bus facts of a project into `<project>/PROJECT-FACTS.md`, without duplicates. */
export async function promoteFacts(opts: PromoteFactsOptions): Promise<PromoteFactsResult> {
  validateProjectId(opts.projectId);
  const projectDir = opts.layout.projectDir(opts.projectId);
  const path = join(projectDir, PROJECT_FACTS_FILE);
  if (!existsSync(projectDir)) return { path, promoted: [], alreadyPresent: 0, written: false };
  const work = (): PromoteFactsResult => {
    const existing = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const known = existingFactHashes(existing);
    const seen = new Set<string>();
    const promoted: PromotedFact[] = [];
    let alreadyPresent = 0;
    for (const fact of collectCandidates(projectDir, opts)) {
      const hash = factHash(fact.body);
      if (known.has(hash)) alreadyPresent++;
      else if (!seen.has(hash)) {
        seen.add(hash);
        promoted.push(fact);
      }
    }
    if (opts.dryRun || promoted.length === 0) return { path, promoted, alreadyPresent, written: false };
    const now = opts.now ?? new Date();
    const head = existing
      ? existing.replace(/^Last updated: .*$/m, `Last updated: ${rfc3339(now)}`)
      : `# Project Facts: ${opts.projectId}\nLast updated: ${rfc3339(now)}\n\n`;
    const sep = head === '' || head.endsWith('\n') ? '' : '\n';
    writeFileAtomic(path, head + sep + promoted.map((f) => formatFactEntry(f, now)).join(''));
    return { path, promoted, alreadyPresent, written: true };
  };
  if (opts.dryRun) return work();
  mkdirSync(projectDir, { recursive: true });
  // Two promote runs at once must not both append the same fact.
  return withFileLock(`${path}.lock`, { timeoutMs: 10_000 }, work);
}
