/** The body of `POST /api/v1/tasks`. */
export interface CreateTaskRequest {
  project_id: string;
  task_id: string;
  agent_type: string;
  prompt: string;
  depends_on?: string[];
  attach_mode?: 'create' | 'attach' | 'resume';
}

/** The answer of `POST /api/v1/tasks`. */
export interface CreateTaskResponse {
  project_id: string;
  task_id: string;
  run_id: string;
  status: string;
  queue_position?: number;
  depends_on?: string[];
}
