import type { GithubLink } from './github-store';

const MAX_COMMITS = 20;
const MAX_MESSAGE_CHARS = 600;

export function pullTitle(link: GithubLink): string {
  return link.title?.trim() ? link.title.trim() : `Task ${link.task_id} for #${link.number}`;
}

/**
 * A pull request's body: it closes its issue, names the task, lists the branch's commits and the
 * task's newest progress messages from its bus (each cut to a few hundred characters).
 */
export function pullBody(link: GithubLink, commits: string[], progress: Array<{ type: string; body: string }>): string {
  const lines = [`Closes #${link.number}.`, '', `Opened by conductor-loop for task \`${link.task_id}\` (project \`${link.project_id}\`, rule \`${link.rule}\`).`, '', '## Commits', ''];
  for (const subject of commits.slice(0, MAX_COMMITS)) lines.push(`- ${oneLine(subject)}`);
  if (commits.length > MAX_COMMITS) lines.push(`- … and ${commits.length - MAX_COMMITS} more`);
  if (progress.length) {
    lines.push('', '## Progress (from the task bus)', '');
    for (const m of progress) lines.push(`- **${m.type}** ${oneLine(m.body).slice(0, MAX_MESSAGE_CHARS)}`);
  }
  return `${lines.join('\n')}\n`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
