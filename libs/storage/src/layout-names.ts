/**
 * The file and folder names of the runs root layout (cli-storage.md §3.1, §4.1; MESSAGE-BUS.md is
 * only a discovery name). A plain module (no imports): the bus writer and reader on the CLI's hot
 * path load it without the storage barrel. RunsLayout (./layout) re-exports them.
 */
export const TASK_BUS_FILE = 'TASK-MESSAGE-BUS.md';
export const PROJECT_BUS_FILE = 'PROJECT-MESSAGE-BUS.md';
export const GENERIC_BUS_FILE = 'MESSAGE-BUS.md';
export const RUN_INFO_FILE = 'run-info.yaml';
export const RUNS_DIR_NAME = 'runs';
