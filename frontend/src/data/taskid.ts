/** Task id the UI proposes: task-YYYYMMDD-HHMMSS-<slug>, slug from the prompt's first words (cli-storage.md §3.3). */
export function generateTaskId(prompt: string, now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp =
    `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}` +
    `-${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `task-${stamp}-${slugify(prompt)}`;
}

export function slugify(text: string): string {
  const words = text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim().split(' ').filter(Boolean);
  let slug = '';
  for (const w of words) {
    const next = slug ? `${slug}-${w}` : w;
    if (next.length > 30) break;
    slug = next;
  }
  slug = slug.slice(0, 30).replace(/-+$/, '');
  return slug.length >= 3 ? slug : `${slug}${slug ? '-' : ''}task`.replace(/^-/, '');
}

/** Matches the storage rule for task ids (D18); the server validates too. */
export const TASK_ID_PATTERN = /^task-\d{8}-\d{6}-[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$/;

/** Splits "a, b\nc" into trimmed, de-duplicated dependency ids. */
export function parseDependencies(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean))];
}
