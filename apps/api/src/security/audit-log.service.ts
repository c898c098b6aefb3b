import { Inject, Injectable, Logger } from '@nestjs/common';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyRequest } from 'fastify';
import { appendRecordSync } from '@app/storage';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { formatTime } from '../common/go-format';

export interface AuditEntry {
  endpoint: string;
  project_id?: string;
  task_id?: string;
  run_id?: string;
  message_id?: string;
  payload?: unknown;
}

const SECRET_KEYS = ['token', 'secret', 'password', 'passwd', 'api_key', 'apikey', 'authorization', 'auth', 'cookie', 'session', 'private_key', 'ssh_key', 'access_key', 'refresh_token'];
const MAX_STRING = 4096;

/** Redacts secrets from an audit payload (api.md §3.6). */
export function sanitize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sanitize);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const norm = k.toLowerCase().replace(/-/g, '_');
      out[k] = SECRET_KEYS.some((s) => norm.includes(s)) ? '[REDACTED]' : sanitize(v);
    }
    return out;
  }
  if (typeof value === 'string') return sanitizeString(value);
  return value;
}

function sanitizeString(s: string): string {
  let out = s
    .replace(/Bearer\s+\S+/g, 'Bearer [REDACTED]')
    .replace(/\b(?:sk|rk|pk|xox[a-z]|ghp)_[A-Za-z0-9_-]{8,}/g, '[REDACTED]')
    .replace(/\bgithub_pat_[A-Za-z0-9_]{8,}/g, '[REDACTED]')
    .replace(/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, '[REDACTED]')
    .replace(/\b(token|secret|password|passwd|api-key|api_key|authorization)\s*[=:]\s*\S+/gi, '$1=[REDACTED]');
  if (out.length > MAX_STRING) out = `${out.slice(0, MAX_STRING)}...[TRUNCATED]`;
  return out;
}

/** Appends one JSON line per mutating request to `<root>/_audit/form-submissions.jsonl`; failures are only logged. */
@Injectable()
export class AuditLogService {
  private readonly logger = new Logger('audit');
  constructor(@Inject(API_CONTEXT) private readonly ctx: ApiContext) {}

  record(req: FastifyRequest, entry: AuditEntry): void {
    const requestId = String((req as any).requestId ?? req.headers['x-request-id'] ?? '');
    const record: Record<string, unknown> = {
      timestamp: formatTime(new Date()),
      request_id: requestId,
      correlation_id: requestId,
      method: req.method,
      path: req.url.split('?')[0],
      endpoint: entry.endpoint,
      remote_addr: req.ip || undefined,
      project_id: entry.project_id,
      task_id: entry.task_id,
      run_id: entry.run_id,
      message_id: entry.message_id,
    };
    if (entry.payload !== undefined) {
      const p = entry.payload && typeof entry.payload === 'object' && !Array.isArray(entry.payload) ? entry.payload : { value: entry.payload };
      record.payload = sanitize(p);
    }
    try {
      const dir = path.join(this.ctx.root, '_audit');
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      // all-or-nothing under a lock: a failed write (ENOSPC) leaves no torn line (issue #11)
      appendRecordSync(path.join(dir, 'form-submissions.jsonl'), `${JSON.stringify(record)}\n`, { fsync: true, mode: 0o640 });
    } catch (err) {
      this.logger.warn(`audit write failed: ${(err as Error).message}`);
    }
  }
}
