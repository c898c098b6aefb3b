export * from './goal-spec';
export * from './quorum';
export * from './facts';
export * from './iterate';
export * from './workflow';
export * from './monitor';
export * from './monitor-daemon';
export * from './goal-graph';
