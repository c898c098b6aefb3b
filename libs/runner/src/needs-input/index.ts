export {
  QUESTION_TYPES,
  ANSWER_TYPE,
  NEEDS_INPUT_FILE,
  ASK_META_KEY,
  openQuestionsOf,
  readOpenQuestions,
  syncNeedsInputFile,
  needsInputOf,
  askQuestion,
  answerQuestion,
  waitForAnswer,
  type OpenQuestion,
  type AskOptions,
  type AnswerOptions,
  type WaitOptions,
} from './questions';
export { inputContextOf, readInputContext, RESUME_META_KEY } from './context';
export { wakeTask, isTaskLoopRunning, latestAgentOf, latestRootRunOf, type WakeOptions, type WakeResult } from './wake';
export { watchStall, isRunStalled, STALLED_FILE, STALL_META_KIND, type StallWatchOptions } from './stall';
export { awaitInput, taskUiLink, DEFAULT_INPUT_WAIT_MS, DEFAULT_INPUT_POLL_MS, type InputGateOptions, type InputGateResult } from './input-gate';
export { needsInputHooks, type NeedsInputLoopOptions, type LoopHooks } from './loop-hooks';
export { scanOpenQuestions, type TaskQuestions } from './scan';
export { startTaskLoop, LOOP_START_TIMEOUT_MS, type TaskLoopSpawn } from './spawn-loop';
