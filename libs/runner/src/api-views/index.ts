/** The API's run and message views (issue #32): records found on disk mapped to the wire shapes of @app/contracts. */
export * from './shapes';
export * from './flat-runs';
export * from './flat-run-json';
export * from './run-order';
export * from './extra-roots';
export * from './project-files';
export * from './task-views';
