import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { getJson } from '../server/helpers';

export const FORGE_SECRET = 'the-github-webhook-secret-0123';
export const FORGE_REPO = 'octo-org/app';
export const forgeRepository = { full_name: FORGE_REPO, name: 'app', owner: { login: 'octo-org' } };

/** The config lines of a server with the needs_input webhook to `hooksUrl` and a forge.github section (`github` lines go under it, indented 4). */
export function forgeConfig(hooksUrl: string, github: string[]): string {
  const head = ['webhook:', `  url: ${hooksUrl}`, '  events: [needs_input]', 'forge:', '  github:', `    webhook_secret: ${FORGE_SECRET}`, '    bot: conductor-bot', '    max_feedback_rounds: 1'];
  return [...head, ...github.map((l) => `    ${l}`), ''].join('\n');
}

/** POSTs a delivery to the server signed as GitHub signs it (or with the given secret / signature). */
export async function deliverGithub(serverUrl: string, event: string, payload: unknown, opts: { delivery?: string; secret?: string; signature?: string } = {}) {
  const body = JSON.stringify(payload);
  const signature = opts.signature ?? (await sign(opts.secret ?? FORGE_SECRET, body));
  return getJson(`${serverUrl}/api/v1/forge/github`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': event, 'X-GitHub-Delivery': opts.delivery ?? randomUUID(), 'X-Hub-Signature-256': signature, 'User-Agent': 'GitHub-Hookshot/abc' },
    body,
  });
}
