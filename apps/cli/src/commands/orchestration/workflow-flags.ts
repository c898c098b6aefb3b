/** The flags of `run-agent workflow run`. */
export interface WorkflowRunFlags {
  project?: string;
  task?: string;
  root?: string;
  config?: string;
  agent?: string;
  cwd?: string;
  template?: string;
  fromStage?: string;
  toStage?: string;
  resume?: boolean;
  dryRun?: boolean;
  timeout?: string;
  stateFile?: string;
  json?: boolean;
}
