export * from './criteria-settings';
export * from './run-criteria';
export * from './loop-hooks';
