/** A parent reference of a message: a bare id (upstream) or an object. */
export type MessageParent = string | { msg_id?: string; MsgID?: string; kind?: string; meta?: Record<string, string> };

export interface MessageLink {
  url: string;
  label?: string;
  kind?: string;
}

/** REST Message (api.md §8.3) with lower-case parents/links objects. */
export interface BusMessage {
  msg_id: string;
  timestamp: string;
  type?: string;
  project_id?: string;
  task_id?: string;
  run_id?: string;
  issue_id?: string;
  parents?: MessageParent[] | null;
  links?: MessageLink[];
  meta?: Record<string, string>;
  body: string;
}

/** `GET /api/v1/questions`: a QUESTION/BLOCKED message without an ANSWER. */
export interface OpenQuestion {
  msg_id: string;
  type: string;
  timestamp: string;
  project_id: string;
  task_id?: string;
  run_id?: string;
  body: string;
}
