import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * Relative links in the docs (README.md, docs/*.md, docs/decisions/*.md) name files that exist and
 * headings that exist (GitHub's anchor rule), so the decisions index and the topic pages stay connected.
 */
const root = join(__dirname, '..', '..', '..');

function markdownFiles(): string[] {
  const inDir = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.md')).map((f) => join(root, dir, f));
  return [join(root, 'README.md'), join(root, 'frontend', 'README.md'), ...inDir('docs'), ...inDir('docs/decisions')];
}

function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function brokenLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1];
    if (/^[a-z]+:/i.test(target)) continue;
    const [path, anchor] = target.split('#', 2);
    const resolved = path ? normalize(join(dirname(file), path)) : file;
    if (!existsSync(resolved)) {
      broken.push(`${target} (no such file)`);
      continue;
    }
    if (anchor && resolved.endsWith('.md')) {
      const anchors = readFileSync(resolved, 'utf8').split('\n').filter((l) => l.startsWith('#')).map((l) => anchorOf(l.replace(/^#+/, '')));
      if (!anchors.includes(anchor)) broken.push(`${target} (no such heading)`);
    }
  }
  return broken;
}

describe('docs links', () => {
  it('anchors follow GitHub rule', () => {
    expect(anchorOf('Server idle memory: 72.5 → 57 MB (issue #15, session 6)')).toBe('server-idle-memory-725--57-mb-issue-15-session-6');
    expect(anchorOf('`execa` and agent process groups')).toBe('execa-and-agent-process-groups');
  });

  it.each(markdownFiles().map((f) => [relative(root, f), f]))('%s has no broken relative link', (_name, file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('the decisions index links every topic page', () => {
    const index = readFileSync(join(root, 'docs', 'decisions.md'), 'utf8');
    const pages = readdirSync(join(root, 'docs', 'decisions')).filter((f) => f.endsWith('.md'));
    expect(pages.filter((p) => !index.includes(`(decisions/${p}`))).toEqual([]);
  });
});
