import * as path from 'node:path';
import { UsageError } from '@app/boot';
import { pathExists } from '@app/storage';
import { formatRfc3339, isZeroTime, tabulate } from './format';
import { ClientOptions, out, printRaw } from './output';
import { parseJson, ServerClient } from './server-client';

/** GET /api/v1/admin/self-update (ours adds `package`; upstream servers send only `binary_path`). */
export interface SelfUpdateStatus {
  state: string;
  package?: string;
  binary_path?: string;
  requested_at?: string;
  started_at?: string;
  finished_at?: string;
  active_runs_at_request?: number;
  active_runs_now: number;
  active_runs_error?: string;
  last_error?: string;
  last_note?: string;
}

export async function selfUpdateStatus(client: ServerClient, _args: string[], opts: ClientOptions): Promise<void> {
  const { data: s, text } = await client.getJson<SelfUpdateStatus>('/api/v1/admin/self-update');
  if (opts.json) return printRaw(text);
  const rows = [
    ['State:', s.state],
    ['Active Root Runs:', String(s.active_runs_now)],
  ];
  if (s.active_runs_error) rows.push(['Active Run Error:', s.active_runs_error]);
  if (s.package) rows.push(['Candidate Package:', s.package]);
  else if (s.binary_path) rows.push(['Candidate Binary:', s.binary_path]);
  if (!isZeroTime(s.requested_at)) rows.push(['Requested At:', formatRfc3339(s.requested_at!)]);
  if (!isZeroTime(s.started_at)) rows.push(['Started At:', formatRfc3339(s.started_at!)]);
  if (!isZeroTime(s.finished_at)) rows.push(['Finished At:', formatRfc3339(s.finished_at!)]);
  if (s.last_error) rows.push(['Last Error:', s.last_error]);
  if (s.last_note) rows.push(['Last Note:', s.last_note]);
  out(tabulate(rows));
}

export interface UpdateStartOptions extends ClientOptions {
  package?: string;
  binary?: string;
}

/** Local files are sent as absolute paths: the server resolves relative ones against its own cwd. */
function absoluteIfLocal(value: string): string {
  return pathExists(value) || /\.(tgz|tar\.gz)$/i.test(value) || value.includes('/') ? path.resolve(value) : value;
}

/** The request body: `--package` (a tarball or a version) or, as upstream's client, `--binary`. */
export function updateRequestBody(opts: { package?: string; binary?: string }): { package: string } | { binary_path: string } {
  const pkg = opts.package?.trim();
  const binary = opts.binary?.trim();
  if (pkg && binary) throw new UsageError('use either --package or --binary, not both');
  if (pkg) return { package: absoluteIfLocal(pkg) };
  if (binary) return { binary_path: path.resolve(binary) };
  throw new UsageError('required flag(s) "package" not set');
}

export async function startSelfUpdate(client: ServerClient, _args: string[], opts: UpdateStartOptions): Promise<void> {
  const body = updateRequestBody(opts);
  const res = await client.call('POST', '/api/v1/admin/self-update', { body, expect: [202] });
  if (opts.json) return printRaw(res.text);
  const s = parseJson<SelfUpdateStatus>(res.text);
  out(`Self-update state: ${s.state}\n`);
  if (s.state === 'deferred') out(`Update is waiting for ${s.active_runs_now} active root run(s) to finish.\n`);
  else if (s.state === 'failed') out(`Update failed: ${s.last_error ?? 'unknown error'}\n`);
  else out('Update handoff has started.\n');
}
