import type { PullHolder } from './pull-holders';

const MAX_COMMITS = 20;
const MAX_MESSAGE_CHARS = 600;

/**
 * A pull request's body: the issue it closes (when an issue started the task), the task, the
 * branch's commits and the task's newest progress messages from its bus (each cut to a few hundred
 * characters).
 */
export function pullBody(holder: PullHolder, commits: string[], progress: Array<{ type: string; body: string }>): string {
  const origin = holder.closes !== undefined ? `rule \`${holder.source}\`` : 'opened on request';
  const lines = [
    ...(holder.closes !== undefined ? [`Closes #${holder.closes}.`, ''] : []),
    `Opened by conductor-loop for task \`${holder.taskId}\` (project \`${holder.projectId}\`, ${origin}).`,
    '',
    '## Commits',
    '',
  ];
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
