export * from './criteria-settings';
export * from './run-criteria';
export * from './loop-hooks';
export * from './job-criteria';
export * from './criteria-view';
