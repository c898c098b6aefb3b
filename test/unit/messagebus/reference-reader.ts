/**
 * A literal reading of cli-storage.md §4.4 (upstream semantics), written independently of
 * libs/messagebus: line-by-line SEEK/HEADER/BODY, a line is a fence when, with trailing CR/LF
 * removed, it equals `---`; bodies lose one trailing "\n" then one "\r"; at EOF a body is emitted
 * only when non-empty and ending with "\n". Headers are parsed with the `yaml` package.
 */
import { parse } from 'yaml';

export interface RefMessage {
  msg_id: string;
  type: string;
  project_id: string;
  task_id: string;
  run_id: string;
  ts: string;
  body: string;
}

/** Go's time.Parse rejects out-of-range fields (month 13, day 0, Feb 30, hour 24, …). */
function validDate(ts: string): boolean {
  const [y, mo, d, h = 0, mi = 0, s = 0] = (ts.match(/\d+/g) ?? []).map(Number);
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCMonth() === mo - 1 && date.getUTCDate() === d && h < 24 && mi < 60 && s < 60;
}

export function referenceRead(text: string): RefMessage[] {
  const out: RefMessage[] = [];
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  let state: 'seek' | 'header' | 'body' = 'seek';
  let header = '';
  let body = '';
  let current: RefMessage | undefined;
  const finalize = (b: string) => {
    let t = b;
    if (t.endsWith('\n')) t = t.slice(0, -1);
    if (t.endsWith('\r')) t = t.slice(0, -1);
    return t;
  };
  for (const line of lines) {
    const trimmed = line.replace(/[\r\n]+$/, '');
    if (state === 'seek') {
      if (trimmed === '---') {
        state = 'header';
        header = '';
      }
    } else if (state === 'header') {
      if (trimmed === '---') {
        let doc: Record<string, unknown>;
        try {
          doc = (parse(header, { schema: 'failsafe' }) ?? {}) as Record<string, unknown>;
          // Go decodes the header into a struct: a scalar or list document is a decode error.
          if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a mapping');
          // ...and `ts` into a time.Time, which accepts only these layouts.
          const ts = doc.ts;
          const timeLayouts = [/^\d{4}-\d{1,2}-\d{1,2}[Tt]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/, /^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?$/, /^\d{4}-\d{1,2}-\d{1,2}$/];
          if (ts !== undefined && ts !== '' && (typeof ts !== 'string' || !timeLayouts.some((re) => re.test(ts.trim())) || !validDate(ts))) throw new Error('bad ts');
          // ...`meta` into map[string]string and `links` into a list of structs (`parents` is a raw node).
          const isMap = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
          if (doc.meta !== undefined && doc.meta !== '' && (!isMap(doc.meta) || Object.values(doc.meta as object).some((v) => typeof v !== 'string'))) throw new Error('bad meta');
          if (doc.links !== undefined && doc.links !== '' && (!Array.isArray(doc.links) || !doc.links.every(isMap))) throw new Error('bad links');
          for (const key of ['msg_id', 'type', 'project_id', 'task_id', 'run_id', 'issue_id']) {
            if (doc[key] !== undefined && typeof doc[key] !== 'string') throw new Error(`bad ${key}`);
          }
        } catch {
          header = '';
          continue;
        }
        const s = (k: string) => (typeof doc[k] === 'string' ? (doc[k] as string) : '');
        current = { msg_id: s('msg_id'), type: s('type'), project_id: s('project_id'), task_id: s('task_id'), run_id: s('run_id'), ts: s('ts'), body: '' };
        body = '';
        state = 'body';
      } else {
        header += line;
      }
    } else if (trimmed === '---') {
      current!.body = finalize(body);
      out.push(current!);
      header = '';
      state = 'header';
    } else {
      body += line;
    }
  }
  if (state === 'body' && current && body.length > 0 && body.endsWith('\n')) {
    current.body = finalize(body);
    out.push(current);
  }
  return out;
}
