/**
 * The one validator for every value that lands in a bus entry's YAML header (type, ids, parents,
 * links, meta). The emitter could quote anything, but a header is read by upstream tools, agents and
 * humans line by line: a value must be one line of printable text with a length limit, and names
 * (types, ids, kinds, keys) a small safe charset. Used by prepareMessage (every writer) and, earlier,
 * by the CLI and the API so that bad input is refused before anything touches the disk.
 */
import { BusError } from './errors';
import type { BusLink, BusParent } from './types';

export const MAX_TYPE_LENGTH = 64;
/** Ids in a header (project, task, run, msg ids): the storage id limit. */
export const MAX_HEADER_ID_LENGTH = 128;
/** Free-text header values (link urls and labels, meta values; paths fit). */
export const MAX_HEADER_TEXT_LENGTH = 4096;
/** Parents or links per message. */
export const MAX_HEADER_LIST = 64;

/** Types, kinds and meta keys: a letter or digit, then letters, digits, `_ . : / -`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/;
/** Ids: one path-safe segment. */
const ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

function invalid(message: string): BusError {
  return new BusError('INVALID_MESSAGE', message);
}

function describe(value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(shown);
}

/** A message type: one line, safe charset, at most 64 characters; returns the trimmed type. */
export function validateMessageType(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid('message type is empty');
  const type = value.trim();
  if (type.length > MAX_TYPE_LENGTH) throw invalid(`message type is ${type.length} characters long, over the ${MAX_TYPE_LENGTH}-character limit`);
  if (!NAME.test(type)) throw invalid(`invalid message type ${describe(type)}: use letters, digits and _ . : / - (one line, e.g. PROGRESS)`);
  return type;
}

/** An id stored in the header; empty is allowed unless `required`. */
export function validateHeaderId(value: unknown, field: string, required = false): string {
  if (value === undefined || value === null || value === '') {
    if (required) throw invalid(`${field} is empty`);
    return '';
  }
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > MAX_HEADER_ID_LENGTH) throw invalid(`${field} is ${value.length} characters long, over the ${MAX_HEADER_ID_LENGTH}-character limit`);
  if (!ID.test(value)) throw invalid(`invalid ${field} ${describe(value)}: use letters, digits and _ . - only`);
  return value;
}

/** Free text in the header: one line without control characters, at most `max` characters. */
export function validateHeaderText(value: unknown, field: string, max = MAX_HEADER_TEXT_LENGTH): string {
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > max) throw invalid(`${field} is ${value.length} characters long, over the ${max}-character limit`);
  if (CONTROL.test(value)) throw invalid(`${field} must be one line without control characters`);
  return value;
}

function validateName(value: unknown, field: string): void {
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > MAX_TYPE_LENGTH) throw invalid(`${field} is ${value.length} characters long, over the ${MAX_TYPE_LENGTH}-character limit`);
  if (!NAME.test(value)) throw invalid(`invalid ${field} ${describe(value)}: use letters, digits and _ . : / -`);
}

function validateMeta(meta: Record<string, string> | undefined, field: string): void {
  if (meta === undefined || meta === null) return;
  if (typeof meta !== 'object' || Array.isArray(meta)) throw invalid(`${field} must be a map of strings`);
  const entries = Object.entries(meta);
  if (entries.length > MAX_HEADER_LIST) throw invalid(`${field} has ${entries.length} keys, over the limit of ${MAX_HEADER_LIST}`);
  for (const [k, v] of entries) {
    validateName(k, `${field} key`);
    validateHeaderText(v, `${field}.${k}`);
  }
}

function validateList<T>(list: T[] | undefined, field: string, each: (item: T, label: string) => void): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw invalid(`${field} must be a list`);
  if (list.length > MAX_HEADER_LIST) throw invalid(`${field} has ${list.length} entries, over the limit of ${MAX_HEADER_LIST}`);
  list.forEach((item, i) => each(item, `${field}[${i}]`));
}

export interface HeaderInput {
  type?: unknown;
  project_id?: unknown;
  task_id?: unknown;
  run_id?: unknown;
  issue_id?: unknown;
  parents?: BusParent[];
  links?: BusLink[];
  meta?: Record<string, string>;
}

/**
 * Checks every header-bound field of a message about to be written; throws
 * BusError('INVALID_MESSAGE') with one line naming the field. `type` and `project_id` are required.
 */
export function validateHeaderFields(input: HeaderInput): void {
  validateMessageType(input.type);
  validateHeaderId(input.project_id, 'project id', true);
  validateHeaderId(input.task_id, 'task id');
  validateHeaderId(input.run_id, 'run id');
  validateHeaderId(input.issue_id, 'issue id');
  validateList(input.parents, 'parent', (p, label) => {
    if (!p || typeof p !== 'object') throw invalid(`${label} must be an object`);
    validateHeaderId(p.msg_id, `${label} msg_id`, true);
    if (p.kind !== undefined && p.kind !== '') validateName(p.kind, `${label} kind`);
    validateMeta(p.meta, `${label} meta`);
  });
  validateList(input.links, 'link', (l, label) => {
    if (!l || typeof l !== 'object') throw invalid(`${label} must be an object`);
    if (validateHeaderText(l.url, `${label} url`).trim() === '') throw invalid(`${label} url is empty`);
    if (l.label !== undefined) validateHeaderText(l.label, `${label} label`, 256);
    if (l.kind !== undefined && l.kind !== '') validateName(l.kind, `${label} kind`);
  });
  validateMeta(input.meta, 'meta');
}
